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
// stored beside the result (editedKey) as a whole transcript, and from then on every format
// of the link is rendered from them by the same renderers as the original. They live as
// long as the result: the sweep and "delete now" remove them with it (deleteResult), and
// "back to the original" removes them alone.

// The bounds of an edited transcript. A 3-hour talk is about 2,500 cues and 150,000
// characters; the JSON body limit (api.DefaultBodyLimit, 1 MB) comes first for most edits.
const (
	MaxEditCues  = 20_000
	MaxCueChars  = 2_000
	MaxEditChars = 600_000
	// MaxSpeakerChars bounds a speaker's name ("Dr. Ortega"), which may also be empty.
	MaxSpeakerChars = 80
)

// editedKey is where the edited transcript of the result stored at resultKey lives.
func editedKey(resultKey string) string { return path.Dir(resultKey) + "/edited.json" }

// Editable is a delivered transcription as the editor opens it.
type Editable struct {
	Format   string // the format ordered ("json" when none was named)
	Original providers.Transcript
	Edited   *providers.Transcript // nil until the visitor saves
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
// visitor's cues. A cue left exactly as the engine gave it keeps the engine's word times, so
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
	e.Edited, err = r.readEdited(ctx, o)
	return k, e, err
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
// the link is rendered from, returning what was stored.
func (r *Results) SaveEdit(ctx context.Context, o Order, segs []providers.Segment) (providers.Transcript, error) {
	e, err := r.Editable(ctx, o)
	if err != nil {
		return providers.Transcript{}, err
	}
	if err := ValidateEdit(segs, EditLimit(e.Original)); err != nil {
		return providers.Transcript{}, err
	}
	t := edited(e.Original, segs)
	raw, err := json.Marshal(t)
	if err != nil {
		return providers.Transcript{}, fmt.Errorf("encoding the edit of order %s: %w", o.ID, err)
	}
	if err := r.putEdit(ctx, o, raw); err != nil {
		return providers.Transcript{}, err
	}
	if err := r.bumpEditVersion(ctx, o.ID); err != nil {
		return providers.Transcript{}, err
	}
	// The order's id only: the text is the visitor's and never reaches the logs.
	r.log.Info("transcript edited", "order", o.ID, "cues", len(segs))
	return t, nil
}

// putEdit stores the visitor's edit, ordered against "delete now" and the expiry, which
// mark the order before they remove its files (markErased, then eraseFiles): the save is
// recorded on the row only while the result is still served, in one statement, and the
// file written after it is checked against the mark again. A delete whose mark came
// before that check removes the file itself (it lists the order's objects after marking);
// one whose mark came after finds the check failing here, and the save removes its file.
// Either way no edit outlives the deletion.
func (r *Results) putEdit(ctx context.Context, o Order, raw []byte) error {
	ok, err := r.orders.recordEdit(ctx, o.ID, o.ResultKey)
	if err != nil {
		return err
	}
	if !ok {
		return ErrLinkExpired
	}
	key := editedKey(o.ResultKey)
	if err := r.storage.Put(ctx, key, bytes.NewReader(raw), int64(len(raw)), "application/json"); err != nil {
		return fmt.Errorf("storing the edit of order %s: %w", o.ID, err)
	}
	serves, err := r.orders.stillServes(context.WithoutCancel(ctx), o.ID, o.ResultKey)
	if err == nil && serves {
		return nil
	}
	if derr := r.storage.Delete(context.WithoutCancel(ctx), key); derr != nil && !errors.Is(derr, providers.ErrNotFound) {
		err = errors.Join(err, derr)
	}
	if err != nil {
		return fmt.Errorf("checking the edit of order %s against its deletion: %w", o.ID, err)
	}
	return ErrLinkExpired
}

// Revert removes the visitor's edit ("back to the original"); without one it does nothing.
func (r *Results) Revert(ctx context.Context, o Order) error {
	if _, err := r.Editable(ctx, o); err != nil {
		return err
	}
	if err := r.storage.Delete(ctx, editedKey(o.ResultKey)); err != nil && !errors.Is(err, providers.ErrNotFound) {
		return fmt.Errorf("removing the edit of order %s: %w", o.ID, err)
	}
	return r.bumpEditVersion(ctx, o.ID)
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

// readEdited reads the stored edit; nil without one.
func (r *Results) readEdited(ctx context.Context, o Order) (*providers.Transcript, error) {
	var t providers.Transcript
	found, err := readStored(ctx, r.storage, editedKey(o.ResultKey), &t)
	if err != nil || !found {
		if err != nil {
			err = fmt.Errorf("the edit of order %s: %w", o.ID, err)
		}
		return nil, err
	}
	return &t, nil
}

// The version of a delivered transcript's text, recorded on its order's row: 0 as
// delivered, one more at every save or revert of the visitor's edit. Rendered downloads
// are cached under it (api/render_cache.go), so a node never serves a render of a text
// that was saved over or reverted, on this node or another. It is bumped after the text
// changed; the row's edits column (recordEdit, in putEdit's fenced statement) is another
// number: saves alone, counted before the file is written, as part of the fence.

// EditVersion reads the version of order id's transcript text.
func (r *Results) EditVersion(ctx context.Context, id string) (int64, error) {
	var v int64
	if err := r.orders.db.QueryRowContext(ctx, `SELECT edit_version FROM orders WHERE id = ?`, id).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the edit version of order %s: %w", id, err)
	}
	return v, nil
}

// bumpEditVersion records that order id's transcript text changed.
func (r *Results) bumpEditVersion(ctx context.Context, id string) error {
	_, err := r.orders.db.ExecContext(ctx, `UPDATE orders SET edit_version = edit_version + 1 WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("recording the edit of order %s: %w", id, err)
	}
	return nil
}
