package links

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Copying a source's body to ffmpeg, and what it cost: bytes, requests, first failure.

// relayBufferSize is the copy buffer per relayed response; memory does not grow with the file.
const relayBufferSize = 32 << 10

var relayBuffers = sync.Pool{New: func() any { b := make([]byte, relayBufferSize); return &b }}

// RelayStats counts what one relayed target cost and records the first thing that went
// wrong at the source, which explains a failing ffmpeg run better than its own message.
type RelayStats struct {
	bytesRead atomic.Int64
	requests  atomic.Int64
	// length is the size the source announced for the whole file, -1 when it did not.
	length atomic.Int64

	mu  sync.Mutex
	err error
}

// BytesRead is how many body bytes the relay read from the source.
func (s *RelayStats) BytesRead() int64 { return s.bytesRead.Load() }

// Requests is how many requests were sent to the source.
func (s *RelayStats) Requests() int64 { return s.requests.Load() }

// Length is the size of the whole file as the source announced it, -1 when unknown (a
// stream sent without length).
func (s *RelayStats) Length() int64 { return s.length.Load() }

// Err is the first source failure: wraps ErrSourceUnreachable (HTTP error, too big,
// unreachable), ErrForbiddenAddress or ErrUnsupportedLink (a refused redirect). Nil if none.
func (s *RelayStats) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *RelayStats) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// copyBody streams the source's body to ffmpeg, counting every byte against the target's
// limit. It returns the bytes copied and an error when the copy stopped early.
func (s *relayServer) copyBody(ctx context.Context, cancel func(), w http.ResponseWriter, body io.Reader, t *relayTarget) (int64, error) {
	var copied int64
	flush := http.NewResponseController(w).Flush
	bufp := relayBuffers.Get().(*[]byte)
	defer relayBuffers.Put(bufp)
	buf := *bufp
	var stalled atomic.Bool
	// A relay whose source must answer within answerWithin (an analysis, which holds a
	// place in the visitors' pool while ffprobe reads) may not go silent longer mid-body.
	wait := s.idle
	if t.answerWithin > 0 {
		wait = min(wait, t.answerWithin)
	}
	idle := time.AfterFunc(wait, func() { stalled.Store(true); cancel() })
	defer idle.Stop()
	for {
		n, err := body.Read(buf)
		idle.Reset(wait)
		if n > 0 {
			if total := t.stats.bytesRead.Add(int64(n)); total > t.limit {
				t.stats.fail(fmt.Errorf("%w: %s sent more than %d bytes", ErrSourceUnreachable, t.host, t.limit))
				return copied, errors.New("size limit reached")
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return copied, werr
			}
			copied += int64(n)
			// Pass on what a slow source sent at once; ffmpeg may be waiting for it.
			if werr := flush(); werr != nil {
				return copied, werr
			}
		}
		switch {
		case err == io.EOF:
			return copied, nil
		case err == nil:
		case stalled.Load():
			t.stats.fail(fmt.Errorf("%w: %s sent nothing for %s", ErrSourceUnreachable, t.host, wait))
			return copied, err
		case ctx.Err() != nil:
			// ffmpeg hung up or the target was closed: not the source's fault.
			return copied, err
		default:
			t.stats.fail(sourceError(t.host, err))
			return copied, err
		}
	}
}
