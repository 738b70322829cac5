package orders

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"parla/providers"
	"parla/providers/transcript"
)

// The visitor's corrections of a delivered transcription (the editor of /r/{token}/edit) are
// stored beside the result (editKey) as a whole transcript, and from then on every format
// of the link is rendered from them by the same renderers as the original. They live as
// long as the result: the sweep and "delete now" remove them with it (eraseFiles), and
// "back to the original" removes them alone. Every change names the version of the text
// it started from (the editor's ETag), and is refused when another change came first
// (replaceEdit).

// The bounds of an edited transcript. A 3-hour talk is about 2,500 cues and 150,000
// characters; the JSON body limit (api.DefaultBodyLimit, 1 MB) comes first for most edits.
const (
	MaxEditCues  = 20_000
	MaxCueChars  = 2_000
	MaxEditChars = 600_000
	// MaxSpeakerChars bounds a speaker's name ("Dr. Ortega"), which may also be empty.
	MaxSpeakerChars = 80
)

// editKey is where the edit named name (the row's edit_name) of the result stored at
// resultKey lives.
func editKey(resultKey, name string) string { return path.Dir(resultKey) + "/" + name }

// ErrEditConflict is a change of the visitor's edit refused because the text is no longer
// at the version it started from: another save or revert, on any node, came first.
var ErrEditConflict = errors.New("the transcript was changed since the version this change started from")

// AnyVersion, as the version a change starts from, is whatever version is current (a
// request's If-Match: *).
const AnyVersion int64 = -1

// Editable is a delivered transcription as the editor opens it.
type Editable struct {
	Format   string                // the format ordered ("json" when none was named)
	Original providers.Transcript  // the engine's, as kept (Delivered: as the visitor got it)
	Edited   *providers.Transcript // nil until the visitor saves
	// Version is the version of the text (EditVersion), read with the edit it names.
	Version int64
	name    string // the edit's file beside the result (editKey); "" without one
}

// Delivered is the original transcript as every format delivered it: cleaned of what the
// engine wrote that nobody said. The editor starts from it, so that correcting one cue
// does not bring back what the cleaner dropped.
func (e Editable) Delivered() providers.Transcript { return transcript.Delivered(e.Original) }

// matches refuses a change that started from another version than the current one.
func (e Editable) matches(version int64) error {
	if version != AnyVersion && version != e.Version {
		return ErrEditConflict
	}
	return nil
}

// ValidateEdit checks an edited transcript's cues: at least one, at most MaxEditCues; each
// with a start that is not negative and not before the previous cue's, an end not before
// its start nor after limit (the recording's length); text that is valid UTF-8, not blank,
// without control characters, at most MaxCueChars characters, MaxEditChars in all; a
// speaker's name, when there is one, the same but at most MaxSpeakerChars. The message
// names the cue by its number and never quotes the text.
func ValidateEdit(segs []providers.Segment, limit time.Duration) error {
	if len(segs) == 0 {
		return bad("invalid_transcript", "the transcript has no cues")
	}
	if len(segs) > MaxEditCues {
		return bad("invalid_transcript", "more than %d cues", MaxEditCues)
	}
	total := 0
	var prev time.Duration
	for i, s := range segs {
		n := i + 1
		switch {
		case s.Start < 0 || s.End < 0:
			return bad("invalid_transcript", "cue %d: a negative time", n)
		case s.Start < prev:
			return bad("invalid_transcript", "cue %d starts before cue %d", n, n-1)
		case s.End < s.Start:
			return bad("invalid_transcript", "cue %d ends before it starts", n)
		case s.End > limit:
			return bad("invalid_transcript", "cue %d ends after the recording", n)
		}
		prev = s.Start
		if err := checkCueText(s.Text); err != nil {
			return bad("invalid_transcript", "cue %d: %s", n, err)
		}
		if err := checkSpeaker(s.Speaker); err != nil {
			return bad("invalid_transcript", "cue %d's speaker: %s", n, err)
		}
		total += utf8.RuneCountInString(s.Text)
	}
	if total > MaxEditChars {
		return bad("invalid_transcript", "more than %d characters in all", MaxEditChars)
	}
	return nil
}

// checkCueText refuses what would break a subtitle file or hide in it: control characters
// (a line break ends an SRT cue early), line and paragraph separators, invalid UTF-8.
func checkCueText(text string) error {
	switch {
	case !utf8.ValidString(text):
		return errors.New("not valid UTF-8")
	case strings.TrimSpace(text) == "":
		return errors.New("no text")
	case utf8.RuneCountInString(text) > MaxCueChars:
		return fmt.Errorf("more than %d characters", MaxCueChars)
	}
	return noControl(text)
}

// checkSpeaker refuses a speaker's name that checkCueText would refuse as text, but for
// being empty (no speaker), or one longer than MaxSpeakerChars.
func checkSpeaker(name string) error {
	switch {
	case !utf8.ValidString(name):
		return errors.New("not valid UTF-8")
	case utf8.RuneCountInString(name) > MaxSpeakerChars:
		return fmt.Errorf("more than %d characters", MaxSpeakerChars)
	}
	return noControl(name)
}

// noControl refuses control characters and line and paragraph separators.
func noControl(text string) error {
	for _, r := range text {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return errors.New("a control character")
		}
	}
	return nil
}

// EditLimit is the latest time a cue may end: the recording's length, or the original's last
// cue when the engine reported no length (or a shorter one).
func EditLimit(t providers.Transcript) time.Duration {
	limit := t.Duration
	for _, s := range t.Segments {
		limit = max(limit, s.End)
	}
	return limit
}

// edited builds the stored transcript: the original's language, length and task with the
// visitor's cues. A cue left exactly as it was delivered keeps the engine's word times, so
// its subtitles are cut as before; a changed cue's time is shared out by characters. A
// renamed speaker changes no times.
func edited(orig providers.Transcript, segs []providers.Segment) providers.Transcript {
	type same struct {
		start, end time.Duration
		text       string
	}
	words := make(map[same][]providers.Word, len(orig.Segments))
	for _, s := range orig.Segments {
		words[same{s.Start, s.End, s.Text}] = s.Words
	}
	out := make([]providers.Segment, len(segs))
	for i, s := range segs {
		out[i] = providers.Segment{Start: s.Start, End: s.End, Text: s.Text, Words: words[same{s.Start, s.End, s.Text}],
			Speaker: strings.TrimSpace(s.Speaker)}
	}
	t := orig
	t.Segments, t.Text = out, transcript.Join(out)
	return t
}

// Editable returns a delivered transcription and the visitor's saved edit of it, if any.
// ErrNoSegments for speech, or a transcription delivered before segments were kept.
func (r *Results) Editable(ctx context.Context, o Order) (Editable, error) {
	_, e, err := r.editable(ctx, o)
	return e, err
}

// editable reads what is kept of a transcription and the visitor's edit of it.
func (r *Results) editable(ctx context.Context, o Order) (Kept, Editable, error) {
	k, err := r.Kept(ctx, o)
	if err != nil {
		return k, Editable{}, err
	}
	if k.Transcript == nil {
		return k, Editable{}, ErrNoSegments
	}
	e := Editable{Format: k.Format, Original: *k.Transcript}
	if e.Format == "" {
		e.Format = "json"
	}
	return k, e, r.readEdit(ctx, o, &e)
}

// readEdit reads the version of the text and the edit the row names, into e. A change
// removes the file it replaced just after the row moves on: a read between the two finds
// the file gone and reads the row again. A file still missing (an edit saved and reverted
// before edits had names of their own) is no edit.
func (r *Results) readEdit(ctx context.Context, o Order, e *Editable) error {
	for range 3 {
		err := r.orders.db.QueryRowContext(ctx, `SELECT edit_version, edit_name FROM orders WHERE id = ?`, o.ID).Scan(&e.Version, &e.name)
		if err != nil {
			return fmt.Errorf("reading the edit of order %s: %w", o.ID, err)
		}
		if e.name == "" {
			return nil
		}
		var t providers.Transcript
		found, err := readStored(ctx, r.storage, editKey(o.ResultKey, e.name), &t)
		if err != nil {
			return fmt.Errorf("the edit of order %s: %w", o.ID, err)
		}
		if found {
			e.Edited = &t
			return nil
		}
	}
	return nil
}

// current is the transcript the link's formats are rendered from: the edit when there is one.
func (e Editable) current() providers.Transcript {
	if e.Edited != nil {
		return *e.Edited
	}
	return e.Original
}

// render renders the link's transcript in format: the visitor's edit as they wrote it
// (transcript.RenderWritten: the engine cleaner would drop their "Thank you." or
// "[MUSIC]"), the engine's original through the cleaner, as delivered.
func (e Editable) render(format string) ([]byte, error) {
	if e.Edited != nil {
		return transcript.RenderWritten(*e.Edited, format)
	}
	return transcript.Render(e.current(), format)
}

// SaveEdit validates the visitor's cues and stores them as the transcript every format of
// the link is rendered from, if the text is still at version (AnyVersion: whichever it
// is), returning what was stored and the text's new version. ErrEditConflict when another
// change came first, ErrLinkExpired when the result is gone.
func (r *Results) SaveEdit(ctx context.Context, o Order, segs []providers.Segment, version int64) (providers.Transcript, int64, error) {
	e, err := r.Editable(ctx, o)
	if err == nil {
		err = e.matches(version)
	}
	if err == nil {
		err = ValidateEdit(segs, EditLimit(e.Original))
	}
	if err != nil {
		return providers.Transcript{}, 0, err
	}
	t := edited(e.Delivered(), segs)
	raw, err := json.Marshal(t)
	if err != nil {
		return providers.Transcript{}, 0, fmt.Errorf("encoding the edit of order %s: %w", o.ID, err)
	}
	v, err := r.replaceEdit(ctx, o, e, raw)
	if err != nil {
		return providers.Transcript{}, 0, err
	}
	// The order's id only: the text is the visitor's and never reaches the logs.
	r.log.Info("transcript edited", "order", o.ID, "cues", len(segs), "version", v)
	return t, v, nil
}

// Revert removes the visitor's edit ("back to the original"), if the text is still at
// version, returning its new version; errors as SaveEdit's.
func (r *Results) Revert(ctx context.Context, o Order, version int64) (int64, error) {
	e, err := r.Editable(ctx, o)
	if err == nil {
		err = e.matches(version)
	}
	if err != nil {
		return 0, err
	}
	return r.replaceEdit(ctx, o, e, nil)
}

// replaceEdit makes raw (nil: none, the original) the visitor's edit in place of e's, if
// the text is still at e.Version and the result still served. The check and the change
// are one conditional UPDATE of the row, so of two changes from one version, on any
// nodes, one wins and the other gets ErrEditConflict, and a save parked on a frozen node
// loses to every change made meanwhile. The new edit is written first, to a file of its
// own: the row never names a file not written whole, and a refused save removes only its
// own. Against "delete now", which marks the row before it lists and removes the order's
// files (erasure.erase: the mark, then the files), the UPDATE is refused once the mark is there:
// either the delete lists the file and removes it, or the save is refused and removes it
// itself. The replaced edit's file goes last.
func (r *Results) replaceEdit(ctx context.Context, o Order, e Editable, raw []byte) (int64, error) {
	name := ""
	if raw != nil {
		name = "edited-" + randomString(12) + ".json"
		if err := r.storage.Put(ctx, editKey(o.ResultKey, name), bytes.NewReader(raw), int64(len(raw)), "application/json"); err != nil {
			return 0, fmt.Errorf("storing the edit of order %s: %w", o.ID, err)
		}
	}
	ok, err := r.orders.db.Changed(ctx, "recording the edit of order "+o.ID,
		`UPDATE orders SET edit_name = ?, edit_version = edit_version + 1
		 WHERE id = ? AND result_key = ? AND result_key != '' AND erased = 0 AND edit_version = ?`,
		name, o.ID, o.ResultKey, e.Version)
	if err != nil {
		// Whether the row moved is unknown: the file stays, and goes with the result.
		return 0, err
	}
	if !ok {
		return 0, errors.Join(r.refusal(ctx, o), r.dropEdit(ctx, o, name))
	}
	if err := r.dropEdit(ctx, o, e.name); err != nil {
		r.log.Warn("removing a replaced edit; it goes with the result", "order", o.ID, "err", err)
	}
	return e.Version + 1, nil
}

// refusal says why a change's UPDATE was refused: the result is gone (deleted, expired),
// or another change came first.
func (r *Results) refusal(ctx context.Context, o Order) error {
	serves, err := r.orders.stillServes(context.WithoutCancel(ctx), o.ID, o.ResultKey)
	switch {
	case err != nil:
		return err
	case !serves:
		return ErrLinkExpired
	}
	return ErrEditConflict
}

// dropEdit removes the edit file named name, if any; one already gone is no error.
func (r *Results) dropEdit(ctx context.Context, o Order, name string) error {
	if name == "" {
		return nil
	}
	err := r.storage.Delete(context.WithoutCancel(ctx), editKey(o.ResultKey, name))
	if err != nil && !errors.Is(err, providers.ErrNotFound) {
		return fmt.Errorf("removing an edit of order %s: %w", o.ID, err)
	}
	return nil
}

// EditedFormat tells whether the visitor edited the result, and in which format it was
// ordered, so that the download renders it from the edit instead of sending the stored file.
func (r *Results) EditedFormat(ctx context.Context, o Order) (format string, ok bool, err error) {
	if o.Service == TTS {
		return "", false, nil
	}
	e, err := r.Editable(ctx, o)
	if errors.Is(err, ErrNoSegments) || err == nil && e.Edited == nil {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return e.Format, true, nil
}

// The version of a delivered transcript's text, recorded on its order's row: 0 as
// delivered, one more at every save or revert of the visitor's edit, in the statement
// that names the edit's file (replaceEdit). It is the editor's ETag, and rendered
// downloads are cached under it (api/render_cache.go), so a node never serves a render of
// a text that was saved over or reverted, on this node or another.

// EditVersion reads the version of order id's transcript text.
func (r *Results) EditVersion(ctx context.Context, id string) (int64, error) {
	var v int64
	if err := r.orders.db.QueryRowContext(ctx, `SELECT edit_version FROM orders WHERE id = ?`, id).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the edit version of order %s: %w", id, err)
	}
	return v, nil
}
