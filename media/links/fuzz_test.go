package links

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kkdai/youtube/v2"
	"golang.org/x/net/idna"
)

// Fuzz targets for what a visitor's link (and YouTube's answer about it) can contain. The
// seed corpora live in testdata/fuzz/<target>; `go test` runs them as regular tests and
// .ci/fuzz.sh mutates them for a few seconds each.

// FuzzCheckURL: whatever CheckURL accepts is an http(s) URL with a host, no user info and no
// fragment, whose host — read as the HTTP client reads it — is never a forbidden address
// when private addresses are not allowed; its output is a fixed point; and the strict and
// the permissive guards disagree only with ErrForbiddenAddress.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://cdn.example.org/v.mp4", "http://127.1/", "http://[::ffff:127.0.0.1]/",
		"http://0x7f000001/", "http://%31%32%37.0.0.1/", "http://localhost./", "http://[fe80::1%25eth0]/",
		"http://169.254.169.254/latest/meta-data/", "https://user:pw@example.com/", "http://example.com:0/",
	} {
		f.Add(s)
	}
	strict := NewGuard(GuardConfig{})
	open := NewGuard(GuardConfig{AllowPrivate: true})
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := strict.CheckURL(raw)
		ou, oerr := open.CheckURL(raw)
		for _, e := range []error{err, oerr} {
			if e != nil && !errors.Is(e, ErrUnsupportedLink) && !errors.Is(e, ErrForbiddenAddress) {
				t.Fatalf("CheckURL(%q): error %v wraps neither ErrUnsupportedLink nor ErrForbiddenAddress", raw, e)
			}
		}
		if oerr != nil && errors.Is(oerr, ErrForbiddenAddress) {
			t.Fatalf("CheckURL(%q) with AllowPrivate: %v", raw, oerr)
		}
		switch {
		case err == nil && oerr != nil:
			t.Fatalf("CheckURL(%q): strict guard accepts, permissive refuses: %v", raw, oerr)
		case err != nil && oerr == nil && !errors.Is(err, ErrForbiddenAddress):
			t.Fatalf("CheckURL(%q): only the strict guard refuses, and not for the address: %v", raw, err)
		case err == nil && u.String() != ou.String():
			t.Fatalf("CheckURL(%q): strict %q, permissive %q", raw, u, ou)
		}
		if oerr == nil {
			checkAccepted(t, open, raw, ou, true)
		}
		if err == nil {
			checkAccepted(t, strict, raw, u, false)
		}
	})
}

// checkAccepted holds the properties of a URL the guard g accepted from raw.
func checkAccepted(t *testing.T, g *Guard, raw string, u *url.URL, allowPrivate bool) {
	t.Helper()
	if u.Scheme != "http" && u.Scheme != "https" {
		t.Fatalf("CheckURL(%q) accepted scheme %q", raw, u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" || u.Opaque != "" || u.User != nil || u.Fragment != "" || u.RawFragment != "" {
		t.Fatalf("CheckURL(%q) = %#v: want a host, no opaque part, no user info, no fragment", raw, u)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p {
			t.Fatalf("CheckURL(%q) kept port %q", raw, p)
		}
	}
	// Normalising twice changes nothing: the client re-checks the URL on every request, and a
	// URL that does not survive its own string form would be refused there.
	s := u.String()
	again, err := g.CheckURL(s)
	if err != nil {
		t.Fatalf("CheckURL(%q) = %q, which CheckURL refuses: %v", raw, s, err)
	}
	if again.String() != s {
		t.Fatalf("CheckURL(%q) = %q, then %q: not a fixed point", raw, s, again)
	}
	// The host the HTTP client will connect to, read from the URL as it sends it.
	sent, err := url.Parse(s)
	if err != nil || sent.Hostname() != u.Hostname() {
		t.Fatalf("CheckURL(%q) = %q: re-parsed host %q, want %q (err %v)", raw, s, sent.Hostname(), u.Hostname(), err)
	}
	if allowPrivate {
		return
	}
	// The HTTP client connects to the IDNA form of a non-ASCII host (net/http's idnaASCII),
	// in which fullwidth digits and ideographic full stops are ASCII: judge that form.
	host := u.Hostname()
	if dialed, err := idna.Lookup.ToASCII(host); err == nil && !isASCII(host) {
		host = dialed
	}
	host = strings.TrimSuffix(host, ".")
	if addr, err := netip.ParseAddr(host); err == nil {
		if reason := forbiddenReason(addr); reason != "" || addr.Zone() != "" {
			t.Fatalf("CheckURL(%q) accepted %s (%s)", raw, addr, reason)
		}
		return
	}
	// A name: it must not be one the resolver reads as a number (inet_aton's forms), nor
	// localhost.
	if addr, numeric, err := parseNumericHost(host); numeric || err != nil {
		t.Fatalf("CheckURL(%q) kept host %q, which reads as the address %s (err %v)", raw, host, addr, err)
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		t.Fatalf("CheckURL(%q) accepted %q", raw, host)
	}
}

// FuzzParseNumericHost compares parseNumericHost with a plain reference reading of
// inet_aton / WHATWG IPv4 hosts in arbitrary precision, so no overflow or base mix-up can
// hide; IPv6 results carry no zone.
func FuzzParseNumericHost(f *testing.F) {
	for _, s := range []string{"127.1", "0x7f000001", "0177.0.0.1", "4294967296", "1.2.3.4.5", "::1", "fe80::1%eth0", "example.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		// checkHost lower-cases before calling it.
		host = strings.ToLower(host)
		addr, numeric, err := parseNumericHost(host)
		if err != nil && numeric {
			t.Fatalf("parseNumericHost(%q): numeric and an error %v", host, err)
		}
		if err != nil && !errors.Is(err, ErrUnsupportedLink) {
			t.Fatalf("parseNumericHost(%q): %v does not wrap ErrUnsupportedLink", host, err)
		}
		if strings.Contains(host, ":") {
			want, perr := netip.ParseAddr(host)
			if ok := perr == nil && want.Zone() == ""; ok != numeric || (ok && addr != want) {
				t.Fatalf("parseNumericHost(%q) = %s, %t, %v; netip reads %s, %v", host, addr, numeric, err, want, perr)
			}
			return
		}
		want, isNumber, ok := referenceIPv4(host)
		if numeric != (isNumber && ok) || (err != nil) != (isNumber && !ok) {
			t.Fatalf("parseNumericHost(%q) = %s, numeric %t, err %v; reference: number %t, valid %t (%s)",
				host, addr, numeric, err, isNumber, ok, want)
		}
		if numeric && addr != want {
			t.Fatalf("parseNumericHost(%q) = %s, reference %s", host, addr, want)
		}
	})
}

// referenceIPv4 reads host as the WHATWG URL parser reads an IPv4 host, with big integers:
// isNumber when the last label is a number, ok when the whole host is a valid address.
func referenceIPv4(host string) (addr netip.Addr, isNumber, ok bool) {
	parts := strings.Split(host, ".")
	value := func(p string) (*big.Int, bool) {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x"):
			p, base = p[2:], 16
			if p == "" {
				return new(big.Int), true
			}
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		if p == "" {
			return nil, false
		}
		for _, c := range p {
			d := strings.IndexRune("0123456789abcdef", c)
			if d < 0 || d >= base {
				return nil, false
			}
		}
		n, good := new(big.Int).SetString(p, base)
		return n, good
	}
	last := parts[len(parts)-1]
	if last == "" {
		return addr, false, false
	}
	if _, good := value(last); !good && strings.Trim(last, "0123456789") != "" {
		return addr, false, false
	}
	if len(parts) > 4 {
		return addr, true, false
	}
	total := new(big.Int)
	for i, p := range parts {
		n, good := value(p)
		if !good {
			return addr, true, false
		}
		if i < len(parts)-1 {
			if n.Cmp(big.NewInt(255)) > 0 {
				return addr, true, false
			}
			total.Lsh(total, 8).Add(total, n)
			continue
		}
		bits := uint(8 * (5 - len(parts)))
		if n.BitLen() > int(bits) {
			return addr, true, false
		}
		total.Lsh(total, bits).Add(total, n)
	}
	var b [4]byte
	total.FillBytes(b[:])
	return netip.AddrFrom4(b), true, true
}

// FuzzForbiddenReason: an IPv4 address gets the same verdict in every IPv6 form that
// carries it (mapped, compatible, NAT64, 6to4), a zone changes nothing, and the guard's
// CheckURL refuses a literal exactly when forbiddenReason names a reason.
func FuzzForbiddenReason(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "169.254.169.254", "8.8.8.8", "::1", "::ffff:10.0.0.1", "2002:c0a8:101::1", "64:ff9b::a9fe:a9fe", "2606:4700::1111"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	strict := NewGuard(GuardConfig{})
	f.Fuzz(func(t *testing.T, b []byte) {
		addr, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		reason := forbiddenReason(addr)
		if z := forbiddenReason(addr.WithZone("eth0")); addr.Is6() && z != reason {
			t.Fatalf("forbiddenReason(%s) = %q, with a zone %q", addr, reason, z)
		}
		raw := "http://" + addr.String() + "/"
		if addr.Is6() {
			raw = "http://[" + addr.String() + "]/"
		}
		_, err := strict.CheckURL(raw)
		if (reason != "") != errors.Is(err, ErrForbiddenAddress) || (reason == "" && err != nil) {
			t.Fatalf("forbiddenReason(%s) = %q but CheckURL(%s): %v", addr, reason, raw, err)
		}
		v4 := addr.Unmap()
		if !v4.Is4() {
			return
		}
		b4 := v4.As4()
		for _, form := range []netip.Addr{
			netip.AddrFrom16([16]byte{10: 0xff, 11: 0xff, 12: b4[0], 13: b4[1], 14: b4[2], 15: b4[3]}),
			netip.AddrFrom16([16]byte{12: b4[0], 13: b4[1], 14: b4[2], 15: b4[3]}),
			netip.AddrFrom16([16]byte{0: 0x00, 1: 0x64, 2: 0xff, 3: 0x9b, 12: b4[0], 13: b4[1], 14: b4[2], 15: b4[3]}),
			netip.AddrFrom16([16]byte{0: 0x20, 1: 0x02, 2: b4[0], 3: b4[1], 4: b4[2], 5: b4[3]}),
		} {
			if forbiddenReason(v4) != "" && forbiddenReason(form) == "" {
				t.Fatalf("%s is forbidden (%s) but %s, which carries it, is not", v4, forbiddenReason(v4), form)
			}
		}
	})
}

// youTubeHosts are the hosts matchYouTube reads.
var youTubeHosts = []string{"youtu.be", "youtube.com", "www.youtube.com", "m.youtube.com",
	"music.youtube.com", "youtube-nocookie.com", "www.youtube-nocookie.com"}

// FuzzMatchYouTube: a matched link is an http(s) link on a YouTube host without user info
// or port, its id has YouTube's shape, the id's watch URL matches back to the same id and
// passes the address guard.
func FuzzMatchYouTube(f *testing.F) {
	for _, s := range []string{"https://www.youtube.com/watch?v=NormalVid01", "https://youtu.be/NormalVid01?t=3",
		"https://evil.com@youtu.be/NormalVid01", "https://youtube.com.evil.com/watch?v=NormalVid01"} {
		f.Add(s)
	}
	strict := NewGuard(GuardConfig{})
	f.Fuzz(func(t *testing.T, raw string) {
		id, ok := matchYouTube(raw)
		if !ok {
			if id != "" {
				t.Fatalf("matchYouTube(%q) = %q without a match", raw, id)
			}
			return
		}
		if !youTubeID.MatchString(id) || len(id) != 11 {
			t.Fatalf("matchYouTube(%q) = %q: not a video id", raw, id)
		}
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil {
			t.Fatalf("matchYouTube(%q) matched a link url.Parse refuses: %v", raw, err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Port() != "" ||
			!slices.Contains(youTubeHosts, strings.ToLower(u.Host)) {
			t.Fatalf("matchYouTube(%q) matched scheme %q, host %q, user %v", raw, u.Scheme, u.Host, u.User)
		}
		if again, ok := matchYouTube(youTubeWatchURL(id)); !ok || again != id {
			t.Fatalf("matchYouTube(%q) = %q, but its watch URL gives %q, %t", raw, id, again, ok)
		}
		if _, err := strict.CheckURL(youTubeWatchURL(id)); err != nil {
			t.Fatalf("watch URL of %q refused by the guard: %v", id, err)
		}
	})
}

// FuzzPickAudioFormat builds a format list from the fuzz input — MIME types separated by
// '|', and per format two bytes of bitrate (kbit/s), one of itag and a flags byte (bit 0:
// has an audio track; bit 1: that track is the default) — and checks the choice against
// pickAudioFormat's rule: audio only, the default track when there is one, the lowest
// adequate bitrate or else the highest, the lower itag on ties, whatever the list's order.
func FuzzPickAudioFormat(f *testing.F) {
	f.Add(`video/mp4; codecs="avc1"|audio/mp4; codecs="mp4a.40.2"|audio/webm; codecs="opus"`, []byte{1, 247, 18, 0, 0, 130, 140, 0, 0, 56, 249, 0})
	f.Fuzz(func(t *testing.T, mimes string, data []byte) {
		var formats youtube.FormatList
		for i, mime := range strings.Split(mimes, "|") {
			var rec [4]byte
			copy(rec[:], data[min(4*i, len(data)):])
			fm := youtube.Format{MimeType: mime, ItagNo: int(rec[2]), Bitrate: 1000 * (int(rec[0])<<8 | int(rec[1]))}
			if rec[3]&1 != 0 {
				fm.AudioTrack = &struct {
					DisplayName    string `json:"displayName"`
					ID             string `json:"id"`
					AudioIsDefault bool   `json:"audioIsDefault"`
				}{AudioIsDefault: rec[3]&2 != 0}
			}
			formats = append(formats, fm)
		}
		checkPick(t, formats)
	})
}

// checkPick checks pickAudioFormat's choice among formats, and that the list's order does
// not change it.
func checkPick(t *testing.T, formats youtube.FormatList) {
	t.Helper()
	isAudio := func(fm youtube.Format) bool { return strings.HasPrefix(strings.ToLower(fm.MimeType), "audio/") }
	isDefault := func(fm youtube.Format) bool { return fm.AudioTrack == nil || fm.AudioTrack.AudioIsDefault }
	var audio, defaults youtube.FormatList
	for _, fm := range formats {
		if isAudio(fm) {
			audio = append(audio, fm)
			if isDefault(fm) {
				defaults = append(defaults, fm)
			}
		}
	}
	got, err := pickAudioFormat(formats)
	if len(audio) == 0 {
		if err == nil || !errors.Is(err, ErrNotMedia) {
			t.Fatalf("no audio among %d formats, yet pickAudioFormat = %v, %v", len(formats), got, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("pickAudioFormat: %v, with %d audio formats", err, len(audio))
	}
	if !isAudio(*got) {
		t.Fatalf("picked %q, not audio", got.MimeType)
	}
	pool := audio
	if len(defaults) > 0 {
		pool = defaults
		if !isDefault(*got) {
			t.Fatalf("picked a dubbed track (itag %d) though the default track is offered", got.ItagNo)
		}
	}
	key := func(fm youtube.Format) [2]int { return [2]int{fm.Bitrate, fm.ItagNo} }
	lower := func(a, b [2]int) bool { return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]) }
	var adequate, best *[2]int
	for _, fm := range pool {
		k := key(fm)
		if fm.Bitrate >= minSpeechBitrate && (adequate == nil || lower(k, *adequate)) {
			adequate = &k
		}
		if best == nil || k[0] > best[0] || (k[0] == best[0] && k[1] < best[1]) {
			best = &k
		}
	}
	want := *best
	if adequate != nil {
		want = *adequate
	}
	if key(*got) != want {
		t.Fatalf("picked bitrate %d itag %d, want bitrate %d itag %d", got.Bitrate, got.ItagNo, want[0], want[1])
	}
	reversed := slices.Clone(formats)
	slices.Reverse(reversed)
	if again, err := pickAudioFormat(reversed); err != nil || key(*again) != key(*got) {
		t.Fatalf("reversed list picks %v (%v), in order %v", again, err, key(*got))
	}
}

// FuzzYouTubeAnalyze feeds a fuzzed player response to the real library, behind a transport
// that answers YouTube's endpoints in memory: whatever YouTube answers, Analyze returns one
// of the link errors or a video with a positive duration that matches lengthSeconds, and
// the audio choice over the formats it read keeps pickAudioFormat's rule.
func FuzzYouTubeAnalyze(f *testing.F) {
	f.Add([]byte(`{"playabilityStatus":{"status":"OK"},"videoDetails":{"title":"t","lengthSeconds":"4"},"streamingData":{"adaptiveFormats":[{"itag":251,"mimeType":"audio/webm","bitrate":142000}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		yt := NewYouTube(YouTubeConfig{HTTPClient: &http.Client{Transport: playerAnswer(body), Timeout: 5 * time.Second}})
		info, err := yt.Analyze(context.Background(), "NormalVid01")
		if err != nil {
			if !errors.Is(err, ErrLiveStream) && !errors.Is(err, ErrVideoUnavailable) && !errors.Is(err, ErrSourceUnreachable) {
				t.Fatalf("Analyze: %v is none of the link errors", err)
			}
			return
		}
		if info.Site != "youtube" || info.ID != "NormalVid01" || info.URL != youTubeWatchURL("NormalVid01") || info.Duration <= 0 {
			t.Fatalf("Analyze = %+v", info)
		}
		var pr struct {
			PlayabilityStatus struct {
				Status string `json:"status"`
			} `json:"playabilityStatus"`
			VideoDetails struct {
				LengthSeconds string `json:"lengthSeconds"`
			} `json:"videoDetails"`
			Microformat struct {
				Renderer struct {
					LengthSeconds string `json:"lengthSeconds"`
				} `json:"playerMicroformatRenderer"`
			} `json:"microformat"`
			StreamingData struct {
				Formats         youtube.FormatList `json:"formats"`
				AdaptiveFormats youtube.FormatList `json:"adaptiveFormats"`
			} `json:"streamingData"`
		}
		if err := json.Unmarshal(body, &pr); err != nil || pr.PlayabilityStatus.Status != "OK" {
			// Read through a fallback (the watch page, whose pattern may cut body short):
			// the answer is not body as a whole.
			return
		}
		seconds := int64(0)
		for _, s := range []string{pr.VideoDetails.LengthSeconds, pr.Microformat.Renderer.LengthSeconds} {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				seconds = int64(n)
			}
		}
		// kkdai/youtube multiplies lengthSeconds by time.Second unchecked: beyond about 292
		// years the duration wraps (18446744074 s reads as 0.29 s); below, it must be exact.
		if seconds <= math.MaxInt64/int64(time.Second) && info.Duration != time.Duration(seconds)*time.Second {
			t.Fatalf("Analyze duration %s, lengthSeconds says %ds", info.Duration, seconds)
		}
		checkPick(t, append(pr.StreamingData.Formats, pr.StreamingData.AdaptiveFormats...))
	})
}

// playerAnswer answers the library's requests from memory: the home page with a visitor id,
// body as the player API's answer and inside the watch page, and 404 for anything else.
type playerAnswer []byte

func (p playerAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	status, body := http.StatusOK, ""
	switch {
	case req.URL.Host == "www.youtube.com" && req.URL.Path == "/":
		body = `<script>ytcfg.set({"INNERTUBE_CONTEXT":{"client":{"visitorData":"CgtGYWtlVmlzaXRvcg%3D%3D"}}});</script>`
	case req.URL.Host == "www.youtube.com" && req.URL.Path == "/youtubei/v1/player":
		body = string(p)
	case req.URL.Host == "www.youtube.com" && req.URL.Path == "/watch":
		body = fmt.Sprintf("<script>var ytInitialPlayerResponse = %s;var meta = {};</script>", p)
	default:
		status, body = http.StatusNotFound, "not found"
	}
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)), Request: req,
	}, nil
}
