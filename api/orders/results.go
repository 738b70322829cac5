package orders

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"

	"parla/providers"
	"parla/providers/transcript"
)

// Results are what delivered orders keep beside their file for the rest of their links'
// life (kept.json: the transcript with its segments, for the other formats; edited-….json:
// the visitor's edit) and erase on "delete now".
type Results struct {
	storage providers.Storage
	orders  *Store
	erasure *erasure
	log     *slog.Logger
}

// keptKey is where the Kept of the result stored at resultKey lives.
func keptKey(resultKey string) string { return path.Dir(resultKey) + "/kept.json" }

func putKept(ctx context.Context, s providers.Storage, resultKey string, k Kept) error {
	b, err := json.Marshal(k)
	if err != nil {
		return fmt.Errorf("encoding what is kept: %w", err)
	}
	if err := s.Put(ctx, keptKey(resultKey), bytes.NewReader(b), int64(len(b)), "application/json"); err != nil {
		return fmt.Errorf("storing what is kept: %w", err)
	}
	return nil
}

// deleteResult removes a result and what is kept with it; missing files are no error. The
// visitor's edits, each a file of its own name, go with the order's folder (eraseFiles).
func deleteResult(ctx context.Context, s providers.Storage, resultKey string) error {
	var errs []error
	for _, key := range []string{resultKey, keptKey(resultKey)} {
		if err := s.Delete(ctx, key); err != nil && !errors.Is(err, providers.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// maxKept bounds what is read back: a 3-hour transcript's segments are well under it.
const maxKept = 32 << 20

// Kept returns what is kept of a delivered order (see Download). Results stored before
// this was kept have none: the zero Kept with the order's service and no error.
func (r *Results) Kept(ctx context.Context, o Order) (Kept, error) {
	k := Kept{Service: o.Service}
	if o.ResultKey == "" {
		return k, ErrLinkExpired
	}
	if _, err := readStored(ctx, r.storage, keptKey(o.ResultKey), &k); err != nil {
		return k, fmt.Errorf("what is kept of order %s: %w", o.ID, err)
	}
	return k, nil
}

// readStored decodes the JSON stored at key into v, reading at most maxKept bytes; found is
// false, and v untouched, when nothing is stored there.
func readStored(ctx context.Context, s providers.Storage, key string, v any) (found bool, err error) {
	obj, err := s.Get(ctx, key)
	if errors.Is(err, providers.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading: %w", err)
	}
	defer obj.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(obj.Body, maxKept))
	if err != nil {
		return false, fmt.Errorf("reading: %w", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("decoding: %w", err)
	}
	return true, nil
}

// ErrNoSegments is returned by OtherFormat for a speech order, or a transcription whose
// segments were not kept.
var ErrNoSegments = errors.New("no transcript kept for this order")

// ErrUnknownFormat is returned by OtherFormat for a name not in providers.TranscriptFormats.
var ErrUnknownFormat = errors.New("unknown transcript format")

// OtherFormat renders a delivered transcription in another format from its kept segments
// (or the visitor's edit of them, results_edit.go), at no charge, returning the file's bytes,
// attachment name and content type.
func (r *Results) OtherFormat(ctx context.Context, o Order, format string) (body []byte, name, contentType string, err error) {
	ext, contentType, ok := transcript.Info(format)
	if !ok || format == "" {
		return nil, "", "", ErrUnknownFormat
	}
	_, e, err := r.editable(ctx, o)
	if err != nil {
		return nil, "", "", err
	}
	body, err = e.render(format)
	if err != nil {
		return nil, "", "", err
	}
	base := strings.TrimSuffix(o.ResultName, path.Ext(o.ResultName))
	if format == "verbose_json" && ext == ".json" {
		base += "-verbose"
	}
	return body, base + ext, contentType, nil
}

// Erase deletes a delivered order's result and what is kept with it now, at the visitor's
// request ("delete now"); its link answers as expired from then on.
func (r *Results) Erase(ctx context.Context, o Order) error {
	if o.ResultKey == "" {
		return ErrLinkExpired
	}
	if err := r.erasure.erase(ctx, o.ID, o.ResultKey); err != nil {
		return err
	}
	r.log.Info("result erased at the visitor's request", "order", o.ID)
	return nil
}
