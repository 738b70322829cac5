package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/lifecycle"

	"parla/providers"
)

// DefaultLifecycleDays is how long the bucket keeps an object when MinIOConfig leaves
// LifecycleDays at zero: the product's 10-day download window.
const DefaultLifecycleDays = 10

// LifecycleRuleID names the expiry rule NewMinIO installs; other rules on the bucket are
// kept as they are.
const LifecycleRuleID = "parla-expire"

// MaxPresignTTL is the longest lifetime S3 (and MinIO) accepts for a presigned URL.
const MaxPresignTTL = 7 * 24 * time.Hour

// unknownSizePartSize bounds the memory an upload of unknown size takes: minio-go buffers
// one part at a time, and left alone it picks ~537 MiB parts so that 10,000 parts reach
// 5 TiB. 16 MiB parts still allow objects of 160 GB.
const unknownSizePartSize = 16 << 20

// MinIOConfig says where the bucket is and how to reach it.
type MinIOConfig struct {
	// Endpoint is the S3 API address the server uses: "host:port", or a URL
	// "http(s)://host:port" whose scheme then overrides UseSSL.
	Endpoint  string
	AccessKey string
	SecretKey string
	// Bucket is created at start if missing.
	Bucket string
	// UseSSL selects https for an Endpoint (and PublicEndpoint) given without a scheme.
	UseSSL bool
	// Region of the bucket; empty asks the server once at start (MinIO: us-east-1).
	Region string
	// PublicEndpoint, when set, is the address the browser uses for presigned links if it
	// differs from Endpoint (e.g. "minio:9000" inside compose, "files.example.com"
	// outside). Same syntax as Endpoint. The signature covers the host, so links are
	// signed for this address directly, not rewritten afterwards.
	PublicEndpoint string
	// LifecycleDays is how many days after upload the bucket itself deletes an object;
	// 0 means DefaultLifecycleDays.
	LifecycleDays int
}

// MinIO stores objects in one MinIO / S3 bucket.
type MinIO struct {
	client  *minio.Client
	presign *minio.Client // signs for PublicEndpoint; same as client when that is empty
	bucket  string
}

var _ providers.Storage = (*MinIO)(nil)

// NewMinIO connects to the bucket, creating it if missing, and makes sure its lifecycle
// has a rule expiring every object after LifecycleDays (installed once, left alone when
// already right).
func NewMinIO(ctx context.Context, cfg MinIOConfig) (*MinIO, error) {
	if cfg.Endpoint == "" || cfg.Bucket == "" {
		return nil, errors.New("minio storage: endpoint and bucket are required")
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		return nil, errors.New("minio storage: access key and secret key are required")
	}
	if cfg.LifecycleDays < 0 {
		return nil, fmt.Errorf("minio storage: lifecycle days %d is negative", cfg.LifecycleDays)
	}
	if cfg.LifecycleDays == 0 {
		cfg.LifecycleDays = DefaultLifecycleDays
	}
	client, err := newMinIOClient(cfg.Endpoint, cfg)
	if err != nil {
		return nil, fmt.Errorf("minio storage: %w", err)
	}
	m := &MinIO{client: client, presign: client, bucket: cfg.Bucket}
	if err := m.ensureBucket(ctx, cfg.Region); err != nil {
		return nil, fmt.Errorf("minio storage: %w", err)
	}
	if err := m.ensureLifecycle(ctx, cfg.LifecycleDays); err != nil {
		return nil, fmt.Errorf("minio storage: %w", err)
	}
	if cfg.PublicEndpoint != "" {
		if cfg.Region == "" {
			// Presigning with a known region is pure computation; without one the client
			// would ask the public endpoint, which the server may not be able to reach.
			region, err := client.GetBucketLocation(ctx, cfg.Bucket)
			if err != nil {
				return nil, fmt.Errorf("minio storage: bucket %s location: %w", cfg.Bucket, err)
			}
			if region == "" {
				region = "us-east-1"
			}
			cfg.Region = region
		}
		m.presign, err = newMinIOClient(cfg.PublicEndpoint, cfg)
		if err != nil {
			return nil, fmt.Errorf("minio storage: public endpoint: %w", err)
		}
	}
	return m, nil
}

func newMinIOClient(endpoint string, cfg MinIOConfig) (*minio.Client, error) {
	host, secure, err := parseEndpoint(endpoint, cfg.UseSSL)
	if err != nil {
		return nil, err
	}
	c, err := minio.New(host, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: secure,
		Region: cfg.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", host, err)
	}
	return c, nil
}

// parseEndpoint accepts "host[:port]" or "http(s)://host[:port]" (with at most a "/"
// path) and returns the host and whether to use TLS.
func parseEndpoint(endpoint string, useSSL bool) (string, bool, error) {
	if !strings.Contains(endpoint, "://") {
		if strings.ContainsAny(endpoint, "/?#") {
			return "", false, fmt.Errorf("endpoint %q: want host:port or a URL", endpoint)
		}
		return endpoint, useSSL, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", false, fmt.Errorf("endpoint %q: scheme must be http or https", endpoint)
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false, fmt.Errorf("endpoint %q: want only scheme, host and port", endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

func (m *MinIO) ensureBucket(ctx context.Context, region string) error {
	ok, err := m.client.BucketExists(ctx, m.bucket)
	if err != nil {
		return fmt.Errorf("checking bucket %s: %w", m.bucket, err)
	}
	if ok {
		return nil
	}
	err = m.client.MakeBucket(ctx, m.bucket, minio.MakeBucketOptions{Region: region})
	if err != nil {
		// Another instance may have created it in between.
		code := minio.ToErrorResponse(err).Code
		if code != minio.BucketAlreadyOwnedByYou && code != "BucketAlreadyExists" {
			return fmt.Errorf("creating bucket %s: %w", m.bucket, err)
		}
	}
	return nil
}

func (m *MinIO) ensureLifecycle(ctx context.Context, days int) error {
	cfg, err := m.client.GetBucketLifecycle(ctx, m.bucket)
	if err != nil {
		if minio.ToErrorResponse(err).Code != "NoSuchLifecycleConfiguration" {
			return fmt.Errorf("reading lifecycle of bucket %s: %w", m.bucket, err)
		}
		cfg = lifecycle.NewConfiguration()
	}
	want := lifecycle.Rule{
		ID:         LifecycleRuleID,
		Status:     "Enabled",
		Expiration: lifecycle.Expiration{Days: lifecycle.ExpirationDays(days)},
		RuleFilter: lifecycle.Filter{}, // every object
	}
	rules := make([]lifecycle.Rule, 0, len(cfg.Rules)+1)
	for _, r := range cfg.Rules {
		if r.ID != LifecycleRuleID {
			rules = append(rules, r)
			continue
		}
		if r.Status == want.Status && r.Expiration.Days == want.Expiration.Days &&
			r.Expiration.IsDateNull() && r.RuleFilter.IsNull() && r.Prefix == "" {
			return nil
		}
	}
	cfg.Rules = append(rules, want)
	if err := m.client.SetBucketLifecycle(ctx, m.bucket, cfg); err != nil {
		return fmt.Errorf("setting %d-day lifecycle on bucket %s: %w", days, m.bucket, err)
	}
	return nil
}

// Bucket returns the bucket name.
func (m *MinIO) Bucket() string { return m.bucket }

// Put uploads r under key. size may be -1 when unknown; the upload is then streamed in
// 16 MiB parts. An upload that fails or is cancelled leaves no object behind.
func (m *MinIO) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("putting %s: %w", key, err)
	}
	opts := minio.PutObjectOptions{ContentType: contentType}
	if size < 0 {
		size = -1
		opts.PartSize = unknownSizePartSize
	}
	if _, err := m.client.PutObject(ctx, m.bucket, key, r, size, opts); err != nil {
		return fmt.Errorf("putting %s in bucket %s: %w", key, m.bucket, err)
	}
	return nil
}

// Get opens the object under key; the caller closes Body. A missing key returns an error
// wrapping providers.ErrNotFound.
func (m *MinIO) Get(ctx context.Context, key string) (providers.Object, error) {
	if err := ValidateKey(key); err != nil {
		return providers.Object{}, fmt.Errorf("getting %s: %w", key, err)
	}
	obj, err := m.client.GetObject(ctx, m.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return providers.Object{}, m.objectErr("getting", key, err)
	}
	// GetObject is lazy; Stat sends the request and reports a missing key.
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return providers.Object{}, m.objectErr("getting", key, err)
	}
	return providers.Object{Body: obj, Size: st.Size}, nil
}

// Delete removes the object under key. A missing key returns an error wrapping
// providers.ErrNotFound; S3 itself answers a delete of a missing key with success, so
// the key is looked up first.
func (m *MinIO) Delete(ctx context.Context, key string) error {
	if err := ValidateKey(key); err != nil {
		return fmt.Errorf("deleting %s: %w", key, err)
	}
	if _, err := m.client.StatObject(ctx, m.bucket, key, minio.StatObjectOptions{}); err != nil {
		return m.objectErr("deleting", key, err)
	}
	if err := m.client.RemoveObject(ctx, m.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return m.objectErr("deleting", key, err)
	}
	return nil
}

// PresignGet returns a URL, valid for ttl (at most 7 days), from which a browser downloads
// the object as an attachment named after filename (see ContentDisposition). It does not
// check that the object exists.
func (m *MinIO) PresignGet(ctx context.Context, key, filename string, ttl time.Duration) (*url.URL, error) {
	if err := ValidateKey(key); err != nil {
		return nil, fmt.Errorf("presigning %s: %w", key, err)
	}
	if ttl < time.Second || ttl > MaxPresignTTL {
		return nil, fmt.Errorf("presigning %s: lifetime %s outside 1s–7 days", key, ttl)
	}
	params := url.Values{}
	params.Set("response-content-disposition", ContentDisposition(filename))
	u, err := m.presign.PresignedGetObject(ctx, m.bucket, key, ttl, params)
	if err != nil {
		return nil, fmt.Errorf("presigning %s in bucket %s: %w", key, m.bucket, err)
	}
	return u, nil
}

// List returns the objects whose key starts with prefix, in lexical order of key.
func (m *MinIO) List(ctx context.Context, prefix string) ([]Entry, error) {
	if err := validatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("listing %q: %w", prefix, err)
	}
	// Cancelling on return stops the listing goroutine when we leave early on an error.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out []Entry
	for o := range m.client.ListObjects(ctx, m.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, fmt.Errorf("listing %q in bucket %s: %w", prefix, m.bucket, o.Err)
		}
		out = append(out, Entry{Key: o.Key, Size: o.Size, ModTime: o.LastModified})
	}
	return out, nil
}

// objectErr wraps err, turning S3's "no such key" into providers.ErrNotFound.
func (m *MinIO) objectErr(op, key string, err error) error {
	if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
		return fmt.Errorf("%s %s: %w", op, key, providers.ErrNotFound)
	}
	return fmt.Errorf("%s %s in bucket %s: %w", op, key, m.bucket, err)
}

// Check asks the server whether the bucket is there: one small request, for readiness.
func (m *MinIO) Check(ctx context.Context) error {
	ok, err := m.client.BucketExists(ctx, m.bucket)
	if err != nil {
		return fmt.Errorf("minio: checking bucket %s: %w", m.bucket, err)
	}
	if !ok {
		return fmt.Errorf("minio: bucket %s is gone", m.bucket)
	}
	return nil
}
