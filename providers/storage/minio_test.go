package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/lifecycle"

	"parla/providers"
	"parla/providers/testkit"
)

// TestMinIO runs every MinIO case against one real server; each subtest uses its own
// bucket so that they cannot see each other's objects.
func TestMinIO(t *testing.T) {
	srv := testkit.StartMinIO(t)
	ctx := context.Background()
	open := func(t *testing.T, bucket string) *MinIO {
		t.Helper()
		m, err := NewMinIO(ctx, MinIOConfig{
			Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Bucket: bucket,
		})
		if err != nil {
			t.Fatalf("NewMinIO: %v", err)
		}
		return m
	}

	t.Run("round trip", func(t *testing.T) {
		m := open(t, "round-trip")
		body := []byte("hello, parla")
		if err := m.Put(ctx, "results/ord_1.mp3", bytes.NewReader(body), int64(len(body)), "audio/mpeg"); err != nil {
			t.Fatalf("Put: %v", err)
		}
		assertContent(t, m, "results/ord_1.mp3", string(body))
		st, err := m.client.StatObject(ctx, m.bucket, "results/ord_1.mp3", minio.StatObjectOptions{})
		if err != nil || st.ContentType != "audio/mpeg" {
			t.Fatalf("stored content type %q, %v; want audio/mpeg", st.ContentType, err)
		}
		if err := m.Delete(ctx, "results/ord_1.mp3"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := m.Get(ctx, "results/ord_1.mp3"); !errors.Is(err, providers.ErrNotFound) {
			t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
		}
	})

	t.Run("check", func(t *testing.T) {
		m := open(t, "check")
		if err := m.Check(ctx); err != nil {
			t.Fatalf("Check: %v", err)
		}
		if err := m.client.RemoveBucket(ctx, m.bucket); err != nil {
			t.Fatal(err)
		}
		if err := m.Check(ctx); err == nil || !strings.Contains(err.Error(), "gone") {
			t.Fatalf("Check without the bucket = %v, want an error", err)
		}
	})

	t.Run("missing key", func(t *testing.T) {
		m := open(t, "missing")
		if _, err := m.Get(ctx, "nope"); !errors.Is(err, providers.ErrNotFound) {
			t.Fatalf("Get = %v, want ErrNotFound", err)
		}
		if err := m.Delete(ctx, "nope"); !errors.Is(err, providers.ErrNotFound) {
			t.Fatalf("Delete = %v, want ErrNotFound", err)
		}
	})

	t.Run("bad keys", func(t *testing.T) {
		m := open(t, "bad-keys")
		for _, key := range []string{"../x", "/abs", "", "a/../../b"} {
			if err := m.Put(ctx, key, strings.NewReader("x"), 1, ""); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
			}
			if _, err := m.PresignGet(ctx, key, "a", time.Minute); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("PresignGet(%q) = %v, want ErrInvalidKey", key, err)
			}
		}
	})

	t.Run("big object of unknown size", func(t *testing.T) {
		m := open(t, "big")
		const size = 20 << 20
		src := io.LimitReader(newPattern(), size)
		want := sha256.New()
		// Hash the stream as it is uploaded; onlyReader hides its length from the client.
		if err := m.Put(ctx, "big.bin", io.TeeReader(onlyReader{src}, want), -1, "application/octet-stream"); err != nil {
			t.Fatalf("Put: %v", err)
		}
		obj, err := m.Get(ctx, "big.bin")
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		defer obj.Body.Close()
		got := sha256.New()
		n, err := io.Copy(got, obj.Body)
		if err != nil {
			t.Fatal(err)
		}
		if n != size || obj.Size != size {
			t.Fatalf("read %d bytes, Size %d; want %d", n, obj.Size, size)
		}
		if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
			t.Fatal("content differs from what was uploaded")
		}
	})

	t.Run("failed upload leaves nothing", func(t *testing.T) {
		m := open(t, "failed")
		for _, size := range []int64{-1, 100_000} {
			err := m.Put(ctx, "half", &failingReader{n: 50_000}, size, "")
			if err == nil {
				t.Fatalf("Put (size %d) succeeded, want an error", size)
			}
			if _, err := m.Get(ctx, "half"); !errors.Is(err, providers.ErrNotFound) {
				t.Fatalf("Get after failed Put (size %d) = %v, want ErrNotFound", size, err)
			}
		}
	})

	t.Run("bucket created and lifecycle set", func(t *testing.T) {
		const bucket = "fresh-bucket"
		if ok, err := adminClient(t, srv).BucketExists(ctx, bucket); err != nil || ok {
			t.Fatalf("bucket exists before NewMinIO: %v, %v", ok, err)
		}
		m := open(t, bucket)
		if ok, err := m.client.BucketExists(ctx, bucket); err != nil || !ok {
			t.Fatalf("BucketExists = %v, %v; want true", ok, err)
		}
		assertLifecycle(t, m.client, bucket, DefaultLifecycleDays)
		// A second start changes nothing.
		_, before, err := m.client.GetBucketLifecycleWithInfo(ctx, bucket)
		if err != nil {
			t.Fatal(err)
		}
		open(t, bucket)
		_, after, err := m.client.GetBucketLifecycleWithInfo(ctx, bucket)
		if err != nil {
			t.Fatal(err)
		}
		if !after.Equal(before) {
			t.Errorf("lifecycle rewritten on second start (%v → %v)", before, after)
		}
		assertLifecycle(t, m.client, bucket, DefaultLifecycleDays)
	})

	t.Run("lifecycle updated and other rules kept", func(t *testing.T) {
		const bucket = "other-rules"
		admin := adminClient(t, srv)
		if err := admin.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
			t.Fatal(err)
		}
		cfg := lifecycle.NewConfiguration()
		cfg.Rules = []lifecycle.Rule{
			{ID: "someone-else", Status: "Enabled", RuleFilter: lifecycle.Filter{Prefix: "logs/"},
				Expiration: lifecycle.Expiration{Days: 30}},
			{ID: LifecycleRuleID, Status: "Enabled", Expiration: lifecycle.Expiration{Days: 3}},
		}
		if err := admin.SetBucketLifecycle(ctx, bucket, cfg); err != nil {
			t.Fatal(err)
		}
		m, err := NewMinIO(ctx, MinIOConfig{
			Endpoint: "http://" + srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
			Bucket: bucket, LifecycleDays: 10,
		})
		if err != nil {
			t.Fatal(err)
		}
		got := assertLifecycle(t, m.client, bucket, 10)
		if len(got.Rules) != 2 {
			t.Fatalf("rules = %+v, want ours and someone-else's", got.Rules)
		}
	})

	t.Run("presigned download", func(t *testing.T) {
		m := open(t, "presign")
		body := []byte("ID3 fake mp3 bytes")
		if err := m.Put(ctx, "results/ord_2.mp3", bytes.NewReader(body), int64(len(body)), "audio/mpeg"); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, filename, wantName string
		}{
			{"plain", "parla-speech.mp3", "parla-speech.mp3"},
			{"hostile", "../evil\"; x=y\r\n.mp3", "evil_x_y.mp3"},
			{"unicode", "Лекция.mp3", "Лекция.mp3"}, // mime reads filename* first
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				u, err := m.PresignGet(ctx, "results/ord_2.mp3", tc.filename, 5*time.Minute)
				if err != nil {
					t.Fatalf("PresignGet: %v", err)
				}
				resp, err := http.Get(u.String())
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				got, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusOK || !bytes.Equal(got, body) {
					t.Fatalf("GET presigned = %d %q, want 200 %q", resp.StatusCode, got, body)
				}
				cd := resp.Header.Get("Content-Disposition")
				disp, params, err := mime.ParseMediaType(cd)
				if err != nil || disp != "attachment" || params["filename"] != tc.wantName {
					t.Fatalf("Content-Disposition %q parsed as %q %v (%v); want attachment with %q",
						cd, disp, params, err, tc.wantName)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "audio/mpeg" {
					t.Errorf("Content-Type = %q, want audio/mpeg", ct)
				}
			})
		}
	})

	t.Run("presigned link expires", func(t *testing.T) {
		m := open(t, "presign-expiry")
		if err := m.Put(ctx, "k", strings.NewReader("x"), 1, ""); err != nil {
			t.Fatal(err)
		}
		u, err := m.PresignGet(ctx, "k", "k.bin", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2100 * time.Millisecond) // under test: the link's one second passes
		resp, err := http.Get(u.String())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("GET expired link = %d, want 403", resp.StatusCode)
		}
	})

	t.Run("presign ttl limits", func(t *testing.T) {
		m := open(t, "presign-ttl")
		for _, ttl := range []time.Duration{0, -time.Minute, MaxPresignTTL + time.Second, 10 * 24 * time.Hour} {
			if _, err := m.PresignGet(ctx, "k", "a", ttl); err == nil {
				t.Errorf("PresignGet with ttl %s succeeded, want an error", ttl)
			}
		}
		if _, err := m.PresignGet(ctx, "k", "a", MaxPresignTTL); err != nil {
			t.Errorf("PresignGet with ttl %s: %v", MaxPresignTTL, err)
		}
	})

	t.Run("public endpoint", func(t *testing.T) {
		m, err := NewMinIO(ctx, MinIOConfig{
			Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
			Bucket: "public", PublicEndpoint: "https://files.example.com",
		})
		if err != nil {
			t.Fatal(err)
		}
		u, err := m.PresignGet(ctx, "results/x.mp3", "x.mp3", 5*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if u.Scheme != "https" || u.Host != "files.example.com" || u.Query().Get("X-Amz-Signature") == "" {
			t.Fatalf("presigned URL %s, want a signed https://files.example.com URL", u)
		}
	})

	t.Run("list", func(t *testing.T) {
		m := open(t, "list")
		for _, k := range []string{"results/a", "results/b/c", "uploads/u1"} {
			if err := m.Put(ctx, k, strings.NewReader(k), -1, ""); err != nil {
				t.Fatal(err)
			}
		}
		got, err := m.List(ctx, "results/")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Key != "results/a" || got[1].Key != "results/b/c" ||
			got[1].Size != int64(len("results/b/c")) || time.Since(got[0].ModTime) > time.Minute {
			t.Fatalf("List = %+v", got)
		}
	})

	t.Run("wrong credentials", func(t *testing.T) {
		_, err := NewMinIO(ctx, MinIOConfig{
			Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: "wrong-secret", Bucket: "nope",
		})
		if err == nil {
			t.Fatal("NewMinIO with a wrong secret succeeded")
		}
	})
}

func TestMinIOConfigErrors(t *testing.T) {
	ok := MinIOConfig{Endpoint: "127.0.0.1:1", AccessKey: "a", SecretKey: "b", Bucket: "c"}
	tests := []struct {
		name   string
		change func(*MinIOConfig)
	}{
		{"no endpoint", func(c *MinIOConfig) { c.Endpoint = "" }},
		{"no bucket", func(c *MinIOConfig) { c.Bucket = "" }},
		{"no access key", func(c *MinIOConfig) { c.AccessKey = "" }},
		{"no secret key", func(c *MinIOConfig) { c.SecretKey = "" }},
		{"negative days", func(c *MinIOConfig) { c.LifecycleDays = -1 }},
		{"endpoint with path", func(c *MinIOConfig) { c.Endpoint = "http://h:9000/x" }},
		{"endpoint ftp", func(c *MinIOConfig) { c.Endpoint = "ftp://h:9000" }},
		{"bare endpoint with path", func(c *MinIOConfig) { c.Endpoint = "h:9000/x" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.change(&cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if _, err := NewMinIO(ctx, cfg); err == nil {
				t.Fatal("NewMinIO succeeded, want an error")
			}
		})
	}
}

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in       string
		useSSL   bool
		host     string
		secure   bool
		wantFail bool
	}{
		{"minio:9000", false, "minio:9000", false, false},
		{"minio:9000", true, "minio:9000", true, false},
		{"http://minio:9000", true, "minio:9000", false, false},
		{"https://files.example.com/", false, "files.example.com", true, false},
		{"https://u:p@files.example.com", false, "", false, true},
		{"https://files.example.com/bucket", false, "", false, true},
		{"files.example.com/bucket", false, "", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			host, secure, err := parseEndpoint(tc.in, tc.useSSL)
			if tc.wantFail {
				if err == nil {
					t.Fatalf("parseEndpoint(%q) = %q, want an error", tc.in, host)
				}
				return
			}
			if err != nil || host != tc.host || secure != tc.secure {
				t.Fatalf("parseEndpoint(%q, %v) = %q, %v, %v; want %q, %v",
					tc.in, tc.useSSL, host, secure, err, tc.host, tc.secure)
			}
		})
	}
}

func adminClient(t *testing.T, srv testkit.MinIOServer) *minio.Client {
	t.Helper()
	c, err := newMinIOClient(srv.Endpoint, MinIOConfig{AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// assertLifecycle reads the bucket's lifecycle back from the server and checks that our
// rule expires every object after days.
func assertLifecycle(t *testing.T, c *minio.Client, bucket string, days int) *lifecycle.Configuration {
	t.Helper()
	cfg, err := c.GetBucketLifecycle(context.Background(), bucket)
	if err != nil {
		t.Fatalf("GetBucketLifecycle: %v", err)
	}
	for _, r := range cfg.Rules {
		if r.ID != LifecycleRuleID {
			continue
		}
		if r.Status != "Enabled" || int(r.Expiration.Days) != days || !r.RuleFilter.IsNull() || r.Prefix != "" {
			t.Fatalf("lifecycle rule %+v, want enabled, every object, %d days", r, days)
		}
		return cfg
	}
	t.Fatalf("no %s rule in %+v", LifecycleRuleID, cfg.Rules)
	return nil
}

// pattern is an endless, non-repeating-looking byte stream (not all zeros, so that a
// server compressing or deduplicating cannot hide a bug).
type pattern struct{ x uint64 }

func newPattern() *pattern { return &pattern{x: 88172645463325252} }

func (p *pattern) Read(b []byte) (int, error) {
	for i := range b {
		p.x ^= p.x << 13
		p.x ^= p.x >> 7
		p.x ^= p.x << 17
		b[i] = byte(p.x)
	}
	return len(b), nil
}

// onlyReader hides every method but Read, so that the client cannot learn the size by
// seeking or type-asserting.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
