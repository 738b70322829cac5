package openai

// Long recordings for the speech-to-text endpoint: cut into chunks, transcribed a few at a
// time, merged back into one transcript.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"parla/media"
	"parla/providers"
)

// transcribeChunks cuts src into chunks, transcribes them and merges the results.
func (t *Transcriber) transcribeChunks(ctx context.Context, src upload, dir string, req providers.TranscribeRequest) (providers.Transcript, error) {
	if src.duration == 0 {
		return providers.Transcript{}, fmt.Errorf("%d bytes of audio of unknown duration cannot be cut into chunks", src.size)
	}
	// The chunks run a few at a time, so their pieces would come out of order: a streamed
	// transcription gets the merged text as one piece.
	partial := req.Partial
	req.Partial = nil
	plan := media.PlanChunks(src.duration, src.size, t.maxBytes, t.maxChunk)
	parts := make([]TranscriptPart, len(plan))
	var mu sync.Mutex
	done := 0
	err := forEach(ctx, len(plan), t.concurrency, func(ctx context.Context, i int) error {
		tr, err := t.transcribeChunk(ctx, src.path, dir, plan, i, req)
		if err != nil {
			return fmt.Errorf("chunk %d of %d (from %s): %w", i+1, len(plan), plan[i].Start, err)
		}
		parts[i] = TranscriptPart{Offset: plan[i].Start, Transcript: tr}
		mu.Lock()
		defer mu.Unlock()
		done++
		req.Report(done * 99 / len(plan))
		return nil
	})
	if err != nil {
		return providers.Transcript{}, err
	}
	tr := MergeTranscripts(parts)
	if partial != nil && tr.Text != "" {
		partial(tr.Text)
	}
	return tr, nil
}

// transcribeChunk cuts chunk i of plan out of the MP3 at path and transcribes it.
func (t *Transcriber) transcribeChunk(ctx context.Context, path, dir string, plan []media.Chunk, i int, req providers.TranscribeRequest) (providers.Transcript, error) {
	c := plan[i]
	length := c.Length
	if i == len(plan)-1 {
		length = 0 // to the end: a probed duration a little short must not drop the tail
	}
	out := filepath.Join(dir, fmt.Sprintf("chunk-%04d.mp3", i))
	defer os.Remove(out)
	if err := t.media.FFmpeg(ctx, media.ChunkArgs(path, out, c.Start, length), nil, nil); err != nil {
		return providers.Transcript{}, fmt.Errorf("cutting: %w", err)
	}
	st, err := os.Stat(out)
	if err != nil {
		return providers.Transcript{}, err
	}
	if st.Size() > t.maxBytes {
		return providers.Transcript{}, fmt.Errorf("%d bytes, above the %d-byte upload limit", st.Size(), t.maxBytes)
	}
	return t.send(ctx, out, "audio.mp3", c.Length, req)
}

// forEach runs fn for 0..n-1, at most limit at a time. The first error cancels the
// others and is returned; so is the context's error when it ends first.
func forEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	sem := make(chan struct{}, limit)
	for i := 0; i < n && ctx.Err() == nil; i++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() {
					firstErr = err
					cancel()
				})
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// TranscriptPart is the transcript of one chunk and where the chunk starts in the whole.
type TranscriptPart struct {
	Offset     time.Duration
	Transcript providers.Transcript
}

// MergeTranscripts joins the transcripts of consecutive chunks into one. Segment and word
// times are shifted by their chunk's offset and kept within the chunk, which ends where its audio
// ends or where the next chunk starts, whichever comes first (a recogniser may stamp past
// its audio, and cut MP3 frames overlap a little), so segments of different chunks never
// overlap. Texts are joined with spaces; the duration runs to the end of the last chunk;
// the language is the first one named.
func MergeTranscripts(parts []TranscriptPart) providers.Transcript {
	var out providers.Transcript
	var texts []string
	for i, p := range parts {
		tr := p.Transcript
		if out.Language == "" {
			out.Language = tr.Language
		}
		if t := strings.TrimSpace(tr.Text); t != "" {
			texts = append(texts, t)
		}
		end := p.Offset + tr.Duration
		if tr.Duration == 0 { // unknown: the segments say how far the chunk goes
			end = p.Offset
			for _, s := range tr.Segments {
				end = max(end, p.Offset+s.End)
			}
		}
		if i+1 < len(parts) {
			end = min(end, parts[i+1].Offset)
		}
		for _, s := range tr.Segments {
			s.Start = min(p.Offset+s.Start, end)
			s.End = min(p.Offset+s.End, end)
			if s.Words != nil {
				words := make([]providers.Word, len(s.Words))
				for k, w := range s.Words {
					w.Start = min(p.Offset+w.Start, end)
					w.End = min(p.Offset+w.End, end)
					words[k] = w
				}
				s.Words = words
			}
			out.Segments = append(out.Segments, s)
		}
		out.Duration = max(out.Duration, p.Offset+tr.Duration, end)
	}
	out.Text = strings.Join(texts, " ")
	return out
}
