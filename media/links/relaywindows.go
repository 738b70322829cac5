package links

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Window sizes for ranged reads. A read of ffmpeg's "bytes=N-" is fetched from the source
// as a series of closed ranges that start small and double: ffprobe, which reads an index
// and hangs up, costs the source a few hundred kilobytes instead of whatever the network
// buffers held when it hung up, and a whole-file read soon runs in large windows.
const (
	firstWindow int64 = 64 << 10
	maxWindow   int64 = 8 << 20
)

// exchange is one request of ffmpeg's and the source requests that answer it.
type exchange struct {
	s      *relayServer
	ctx    context.Context
	cancel func()
	w      http.ResponseWriter
	method string
	t      *relayTarget
}

// passThrough forwards the request once and relays the answer as it is.
func (x *exchange) passThrough(rangeHeader string) {
	resp, ok := x.open(rangeHeader)
	if !ok {
		return
	}
	defer resp.Body.Close()
	x.relay(resp)
}

// relay sends a source's answer on unchanged.
func (x *exchange) relay(resp *http.Response) {
	if resp.StatusCode == http.StatusOK && resp.ContentLength >= 0 {
		x.t.stats.length.Store(resp.ContentLength)
	}
	copyHeaders(x.w.Header(), resp)
	if resp.ContentLength >= 0 {
		x.w.Header().Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	x.w.WriteHeader(resp.StatusCode)
	if x.method == http.MethodHead {
		return
	}
	if _, err := x.s.copyBody(x.ctx, x.cancel, x.w, resp.Body, x.t); err != nil {
		// Cut the connection so ffmpeg sees a truncated body rather than a short file.
		panic(http.ErrAbortHandler)
	}
}

// windows answers "bytes=first-last" (last < 0: to the end) with one 206 response whose
// body is fetched from the source in growing closed ranges. A source that ignores ranges,
// or does not say how big the file is, gets its answer relayed as it is.
func (x *exchange) windows(first, last int64) {
	win := firstWindow
	resp, ok := x.open(byteRange(first, first+win-1, last))
	if !ok {
		return
	}
	defer func() {
		if resp != nil {
			resp.Body.Close()
		}
	}()
	if resp.StatusCode != http.StatusPartialContent {
		x.relay(resp) // 200: the source ignores ranges; 416: nothing there
		return
	}
	from, _, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
	if !ok || from != first || total < 0 {
		// Without the file's size the answer cannot be promised up front: ask again as
		// ffmpeg asked.
		resp.Body.Close()
		resp = nil
		x.passThrough(byteRange(first, last, -1))
		return
	}
	x.t.stats.length.Store(total)
	end := total - 1
	if last >= 0 && last < end {
		end = last
	}
	copyHeaders(x.w.Header(), resp)
	x.w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, end, total))
	x.w.Header().Set("Content-Length", strconv.FormatInt(end-first+1, 10))
	x.w.WriteHeader(http.StatusPartialContent)
	for pos := first; ; {
		n, err := x.s.copyBody(x.ctx, x.cancel, x.w, resp.Body, x.t)
		pos += n
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		resp.Body.Close()
		if pos > end {
			return
		}
		if n == 0 {
			x.t.stats.fail(fmt.Errorf("%w: %s sent an empty range", ErrSourceUnreachable, x.t.host))
			panic(http.ErrAbortHandler)
		}
		win = min(2*win, maxWindow)
		if resp, ok = x.next(byteRange(pos, pos+win-1, end), pos); !ok {
			panic(http.ErrAbortHandler)
		}
	}
}

// next fetches a later window; the source must answer with exactly that range.
func (x *exchange) next(rangeHeader string, pos int64) (*http.Response, bool) {
	resp, err := x.s.forward(x.ctx, x.method, rangeHeader, x.t)
	if err != nil {
		if x.ctx.Err() == nil {
			x.t.stats.fail(sourceError(x.t.host, err))
		}
		return nil, false
	}
	if from, _, _, ok := parseContentRange(resp.Header.Get("Content-Range")); resp.StatusCode != http.StatusPartialContent || !ok || from != pos {
		resp.Body.Close()
		x.t.stats.fail(fmt.Errorf("%w: %s answered a range request with %s", ErrSourceUnreachable, x.t.host, resp.Status))
		return nil, false
	}
	return resp, true
}

// open sends the first source request; on failure it answers ffmpeg with 502 itself.
func (x *exchange) open(rangeHeader string) (*http.Response, bool) {
	resp, err := x.s.forward(x.ctx, x.method, rangeHeader, x.t)
	if err != nil {
		if x.ctx.Err() == nil {
			x.t.stats.fail(sourceError(x.t.host, err))
		}
		http.Error(x.w, "source failed", http.StatusBadGateway)
		return nil, false
	}
	if resp.StatusCode >= 400 && resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		resp.Body.Close()
		x.t.stats.fail(fmt.Errorf("%w: %s answered %s", ErrSourceUnreachable, x.t.host, resp.Status))
		http.Error(x.w, "source failed", http.StatusBadGateway)
		return nil, false
	}
	return resp, true
}

// byteRange is the Range header for first..last, with last capped at limit (limit < 0:
// no cap); last < 0 means to the end.
func byteRange(first, last, limit int64) string {
	if limit >= 0 && (last < 0 || last > limit) {
		last = limit
	}
	if last < 0 {
		return fmt.Sprintf("bytes=%d-", first)
	}
	return fmt.Sprintf("bytes=%d-%d", first, last)
}

// parseRange reads a single-range header "bytes=first-" or "bytes=first-last" (last -1 for
// the former). Suffix ranges and lists are not windowed.
func parseRange(h string) (first, last int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	a, b, dash := strings.Cut(spec, "-")
	if !found || !dash || strings.Contains(b, ",") {
		return 0, 0, false
	}
	first, err := strconv.ParseInt(a, 10, 64)
	if err != nil || first < 0 {
		return 0, 0, false
	}
	if b == "" {
		return first, -1, true
	}
	last, err = strconv.ParseInt(b, 10, 64)
	if err != nil || last < first {
		return 0, 0, false
	}
	return first, last, true
}

// parseContentRange reads "bytes first-last/total"; total is -1 for "*".
func parseContentRange(h string) (first, last, total int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes ")
	rng, size, slash := strings.Cut(spec, "/")
	first, last, ranged := parseRange("bytes=" + rng)
	if !found || !slash || !ranged || last < 0 {
		return 0, 0, 0, false
	}
	if size == "*" {
		return first, last, -1, true
	}
	total, err := strconv.ParseInt(size, 10, 64)
	if err != nil || total <= last {
		return 0, 0, 0, false
	}
	return first, last, total, true
}

// relayedHeaders are the response headers ffmpeg needs to seek and size the file.
var relayedHeaders = []string{"Content-Type", "Content-Range", "Accept-Ranges", "Last-Modified", "ETag"}

func copyHeaders(dst http.Header, resp *http.Response) {
	for _, k := range relayedHeaders {
		if v := resp.Header.Get(k); v != "" {
			dst.Set(k, v)
		}
	}
}
