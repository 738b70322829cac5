package orders

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"parla/providers"
	"parla/providers/transcript"
)

func seg(start, end time.Duration, text string) providers.Segment {
	return providers.Segment{Start: start, End: end, Text: text}
}

// spoken is a segment with its speaker.
func spoken(start, end time.Duration, text, speaker string) providers.Segment {
	return providers.Segment{Start: start, End: end, Text: text, Speaker: speaker}
}

func TestValidateEdit(t *testing.T) {
	s := time.Second
	long := strings.Repeat("é", MaxCueChars+1)
	many := make([]providers.Segment, MaxEditCues+1)
	for i := range many {
		many[i] = seg(0, 0, "a")
	}
	big := make([]providers.Segment, MaxEditChars/MaxCueChars+1)
	for i := range big {
		big[i] = seg(0, s, strings.Repeat("a", MaxCueChars))
	}
	for _, c := range []struct {
		name string
		segs []providers.Segment
		ok   bool
	}{
		{"two cues", []providers.Segment{seg(0, s, "One."), seg(s, 2*s, "Two.")}, true},
		{"zero length and overlapping", []providers.Segment{seg(0, 0, "One."), seg(0, 3*s, "Two."), seg(s, 2*s, "Three.")}, true},
		{"ends at the recording's end", []providers.Segment{seg(9*s, 10*s, "Fin.")}, true},
		{"Arabic and emoji", []providers.Segment{seg(0, s, "مرحبا 👋")}, true},
		{"no cues", nil, false},
		{"too many cues", many, false},
		{"too many characters", big, false},
		{"negative start", []providers.Segment{seg(-1, s, "One.")}, false},
		{"starts out of order", []providers.Segment{seg(s, 2*s, "One."), seg(0, s, "Two.")}, false},
		{"ends before it starts", []providers.Segment{seg(2*s, s, "One.")}, false},
		{"after the recording", []providers.Segment{seg(9*s, 10*s+time.Millisecond, "One.")}, false},
		{"blank", []providers.Segment{seg(0, s, " \u3000")}, false},
		{"a line break", []providers.Segment{seg(0, s, "One.\n\n2\n00:00:00,000 --> 00:00:01,000")}, false},
		{"a NUL", []providers.Segment{seg(0, s, "One\x00")}, false},
		{"a line separator", []providers.Segment{seg(0, s, "One\u2028Two")}, false},
		{"invalid UTF-8", []providers.Segment{seg(0, s, "One\xff")}, false},
		{"a cue too long", []providers.Segment{seg(0, s, long)}, false},
		{"named speakers", []providers.Segment{spoken(0, s, "One.", "Dr. Ortega"), spoken(s, 2*s, "Two.", "")}, true},
		{"a speaker's name too long", []providers.Segment{spoken(0, s, "One.", strings.Repeat("é", MaxSpeakerChars+1))}, false},
		{"a line break in a speaker's name", []providers.Segment{spoken(0, s, "One.", "A\n\n2")}, false},
		{"invalid UTF-8 in a speaker's name", []providers.Segment{spoken(0, s, "One.", "A\xff")}, false},
	} {
		err := ValidateEdit(c.segs, 10*s)
		var ie *InputError
		if c.ok && err != nil || !c.ok && (!errors.As(err, &ie) || ie.Code != "invalid_transcript") {
			t.Errorf("%s: %v", c.name, err)
		}
		if err != nil && strings.Contains(err.Error(), "One") {
			t.Errorf("%s: the message quotes the text: %v", c.name, err)
		}
	}
}

// FuzzValidateEdit: an accepted edit keeps its promises (ordered, non-negative, within the
// recording, printable), and every format renders from it.
func FuzzValidateEdit(f *testing.F) {
	f.Add(int64(0), int64(1000), "One.", int64(500), int64(2000), "Two.", int64(2000))
	f.Add(int64(0), int64(0), "مرحبا", int64(0), int64(0), "--> <b>", int64(0))
	f.Fuzz(func(t *testing.T, s1, e1 int64, t1 string, s2, e2 int64, t2 string, limit int64) {
		ms := time.Millisecond
		segs := []providers.Segment{seg(time.Duration(s1)*ms, time.Duration(e1)*ms, t1), seg(time.Duration(s2)*ms, time.Duration(e2)*ms, t2)}
		lim := time.Duration(limit) * ms
		if ValidateEdit(segs, lim) != nil {
			return
		}
		prev := time.Duration(0)
		for _, s := range segs {
			if s.Start < prev || s.End < s.Start || s.End > lim || strings.ContainsAny(s.Text, "\n\r\x00") {
				t.Fatalf("accepted %+v within %s", segs, lim)
			}
			prev = s.Start
		}
		ed := edited(providers.Transcript{Language: "english", Duration: lim}, segs)
		for _, format := range providers.TranscriptFormats {
			if _, err := transcript.Render(ed, format); err != nil {
				t.Fatalf("%s of %+v: %v", format, segs, err)
			}
		}
	})
}

// A saved edit is what every format of the link serves, the ordered one included; an
// untouched cue keeps the engine's words; "back to the original" and "delete now" remove it.
func TestSaveEditRevertAndErase(t *testing.T) {
	f, o, e := deliveredTranscript(t)
	ctx := context.Background()
	if format, ok, err := f.book.Results.EditedFormat(ctx, o); ok || err != nil {
		t.Errorf("before any edit: %q %t %v", format, ok, err)
	}
	orig := e.Original.Segments
	orig[0].Words = []providers.Word{{Start: 0, End: time.Second, Text: "One."}}
	f.keepTranscript(t, o, e.Original)

	if _, _, err := f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, "One."), seg(11*time.Second, 12*time.Second, "Late.")}, 0); err == nil {
		t.Error("a cue after the recording was saved")
	}
	saved, v, err := f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, "One."), seg(orig[1].Start, orig[1].End, "Dr. Ortega.")}, 0)
	if err != nil || v != 1 {
		t.Fatal(v, err)
	}
	if len(saved.Segments[0].Words) != 1 || saved.Segments[1].Words != nil || saved.Text != "One. Dr. Ortega." || saved.Language != "english" {
		t.Errorf("saved %+v", saved)
	}
	for _, format := range []string{"srt", "vtt", "text", "json", "verbose_json"} {
		body, _, _, err := f.book.Results.OtherFormat(ctx, o, format)
		if err != nil || !strings.Contains(string(body), "Dr. Ortega.") {
			t.Errorf("%s after the edit: %v\n%s", format, err, body)
		}
	}
	if format, ok, err := f.book.Results.EditedFormat(ctx, o); format != "srt" || !ok || err != nil {
		t.Errorf("the ordered format after the edit: %q %t %v", format, ok, err)
	}
	if strings.Contains(f.logs.String(), "Ortega") {
		t.Errorf("the edited text reached the log:\n%s", f.logs.String())
	}

	if v, err := f.book.Results.Revert(ctx, o, 1); err != nil || v != 2 {
		t.Fatal(v, err)
	}
	if body, _, _, _ := f.book.Results.OtherFormat(ctx, o, "text"); string(body) != "One. Two.\n" {
		t.Errorf("text after going back to the original: %q", body)
	}
	if _, _, err := f.book.Results.SaveEdit(ctx, o, []providers.Segment{seg(0, time.Second, "Again.")}, 2); err != nil {
		t.Fatal(err)
	}
	if err := f.book.Results.Erase(ctx, o); err != nil {
		t.Fatal(err)
	}
	if left, _ := f.files.List(ctx, "results/"+o.ID+"/"); len(left) != 0 {
		t.Errorf("the edit outlived delete now: %v", left)
	}
}

// Speakers renamed in the editor are what every format names; the words of a cue whose
// text and times stayed are kept.
func TestSaveEditRenamesSpeakers(t *testing.T) {
	f, o, e := deliveredTranscript(t)
	ctx := context.Background()
	orig := e.Original.Segments
	orig[0].Speaker, orig[1].Speaker = "A", "B"
	f.keepTranscript(t, o, e.Original)
	renamed := []providers.Segment{spoken(orig[0].Start, orig[0].End, orig[0].Text, "Dr. Ortega"), spoken(orig[1].Start, orig[1].End, orig[1].Text, " B ")}
	saved, _, err := f.book.Results.SaveEdit(ctx, o, renamed, AnyVersion)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Segments[0].Speaker != "Dr. Ortega" || saved.Segments[1].Speaker != "B" {
		t.Errorf("saved speakers %+v", saved.Segments)
	}
	for format, want := range map[string]string{"vtt": "<v Dr. Ortega>One.", "srt": "Dr. Ortega: One.", "text": "Dr. Ortega: One.\nB: Two."} {
		body, _, _, err := f.book.Results.OtherFormat(ctx, o, format)
		if err != nil || !strings.Contains(string(body), want) {
			t.Errorf("%s lacks %q: %v\n%s", format, want, err, body)
		}
	}
	again, err := f.book.Results.Editable(ctx, o)
	if err != nil || again.Edited == nil || again.Edited.Segments[0].Speaker != "Dr. Ortega" || again.Original.Segments[0].Speaker != "A" {
		t.Errorf("read back %+v, %v", again, err)
	}
}

// deliveredTranscript is a paid and delivered srt transcription of 10 s in two segments,
// as the editor opens it before any edit.
func deliveredTranscript(t *testing.T) (*fixture, Order, Editable) {
	t.Helper()
	return deliveredTranscriptDeps(t, nil)
}

// deliveredTranscriptDeps is deliveredTranscript with the dependencies edited.
func deliveredTranscriptDeps(t *testing.T, editDeps func(*Deps)) (*fixture, Order, Editable) {
	t.Helper()
	f := newFixtureDeps(t, nil, editDeps)
	ctx := context.Background()
	u, _, err := f.upload(t, "10s")
	if err != nil {
		t.Fatal(err)
	}
	co, err := f.book.Desk.CreateSTT(ctx, f.transcriptOrder(u.ID, ""))
	if err != nil {
		t.Fatal(err)
	}
	f.pay(t, co.SessionID)
	o := f.waitStatus(t, co.OrderID, Done)
	e, err := f.book.Results.Editable(ctx, o)
	if err != nil || e.Edited != nil || len(e.Original.Segments) != 2 {
		t.Fatalf("editable %+v, %v", e, err)
	}
	return f, o, e
}

// keepTranscript replaces what is kept of an order's transcript (to give it word times).
func (f *fixture) keepTranscript(t *testing.T, o Order, tr providers.Transcript) {
	t.Helper()
	k, err := f.book.Results.Kept(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	k.Transcript = &tr
	if err := putKept(context.Background(), f.files, o.ResultKey, k); err != nil {
		t.Fatal(err)
	}
}
