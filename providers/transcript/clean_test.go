package transcript

import (
	"slices"
	"strings"
	"testing"
	"time"

	"parla/providers"
)

func TestStripAnnotations(t *testing.T) {
	tests := []struct{ in, want string }{
		{"[BLANK_AUDIO]", ""},
		{" [ Silence ] ", ""},
		{"[MUSIC PLAYING] Hello there.", "Hello there."},
		{"Hello [inaudible] world.", "Hello world."},
		{"(music)", ""},
		{"(upbeat music) Welcome back.", "Welcome back."},
		{"She said (laughs) no.", "She said no."},
		{"*applause*", ""},
		{"*laughs* Okay.", "Okay."},
		{"♪♪", ""},
		{"♪ Never gonna give you up ♪", "Never gonna give you up"},
		{"<|endoftext|>", ""},
		{"[音楽]", ""},
		{"（拍手）ありがとう。", "ありがとう。"},
		{"(Música)", ""},
		{"(аплодисменты)", ""},
		{"(موسيقى)", ""},
		{"[Música] Hola a todos.", "Hola a todos."},
		// Kept: spoken words in parentheses, a lone star, a long or unclosed bracket.
		{"He paid (in cash) at once.", "He paid (in cash) at once."},
		{"5 * 3 = 15", "5 * 3 = 15"},
		{"2 * 3 * 4 is 24", "2 * 3 * 4 is 24"},
		{"a [ never closed", "a [ never closed"},
		{"Plain text\nwith a newline.", "Plain text\nwith a newline."},
		{"[" + strings.Repeat("x", 80) + "]", "[" + strings.Repeat("x", 80) + "]"},
	}
	for _, tt := range tests {
		if got := stripAnnotations(tt.in); got != tt.want {
			t.Errorf("stripAnnotations(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCleanDropsHallucinations(t *testing.T) {
	tests := []struct {
		name string
		segs []providers.Segment
		kept []string // texts of the kept segments
	}{
		{"markers only", []providers.Segment{seg(0, sec(30), "[BLANK_AUDIO]"), seg(sec(30), sec(32), "Hello.")}, []string{"Hello."}},
		{"punctuation only", []providers.Segment{seg(0, sec(1), "..."), seg(sec(1), sec(2), " - "), seg(sec(2), sec(3), "Yes.")}, []string{"Yes."}},
		{"thank you over silence", []providers.Segment{seg(0, sec(3), "Hi all."), seg(sec(3), sec(30), " Thank you.")}, []string{"Hi all."}},
		{"thank you said", []providers.Segment{seg(0, sec(3), "Hi all."), seg(sec(3), sec(3.8), " Thank you.")}, []string{"Hi all.", "Thank you."}},
		{"thank you said within a long timed segment", []providers.Segment{{Start: 0, End: sec(10), Text: "Thank you.",
			Words: []providers.Word{word(sec(5), sec(5.3), " Thank"), word(sec(5.3), sec(5.6), " you.")}}}, []string{"Thank you."}},
		{"thank you stretched by its own words", []providers.Segment{{Start: 0, End: sec(10), Text: "Thank you.",
			Words: []providers.Word{word(0, sec(5), " Thank"), word(sec(5), sec(10), " you.")}}}, nil},
		{"okay is no hallucination phrase", []providers.Segment{seg(0, sec(3), "Okay.")}, []string{"Okay."}},
		{"thanks for watching over silence", []providers.Segment{seg(sec(50), sec(60), "Thanks for watching!")}, nil},
		{"thanks for watching said", []providers.Segment{seg(sec(50), sec(51.5), "Thanks for watching!")}, []string{"Thanks for watching!"}},
		{"japanese over silence", []providers.Segment{seg(0, sec(2), "こんにちは。"), seg(sec(2), sec(29), "ご視聴ありがとうございました")}, []string{"こんにちは。"}},
		{"japanese said", []providers.Segment{seg(0, sec(1.5), "ご視聴ありがとうございました。")}, []string{"ご視聴ありがとうございました。"}},
		{"credit anywhere", []providers.Segment{seg(0, sec(1), "Subtitles by the Amara.org community"), seg(sec(1), sec(2), "Go.")}, []string{"Go."}},
		{"russian credit", []providers.Segment{seg(0, sec(3), "Субтитры сделал DimaTorzok"), seg(sec(3), sec(5), "Привет.")}, []string{"Привет."}},
		{"chinese credit", []providers.Segment{seg(0, sec(3), "字幕由Amara.org社区提供")}, nil},
		{"sparse word over a long span", []providers.Segment{seg(0, sec(2), "Start."), seg(sec(2), sec(12), "Okay then.")}, []string{"Start."}},
		{"short word in a normal span", []providers.Segment{seg(0, sec(2), "Okay then.")}, []string{"Okay then."}},
		{"loop", []providers.Segment{
			seg(0, sec(2), "I see."), seg(sec(2), sec(4), "I see."), seg(sec(4), sec(6), "I see!"),
			seg(sec(6), sec(8), "I see."), seg(sec(8), sec(10), "Then what?")}, []string{"I see.", "I see.", "Then what?"}},
		{"two repeats kept", []providers.Segment{seg(0, sec(1), "No."), seg(sec(1), sec(2), "No.")}, []string{"No.", "No."}},
		{"ordinary speech untouched", []providers.Segment{
			seg(0, sec(4), "We measured the tide at noon."), seg(sec(4), sec(9), "It was higher than the forecast said.")},
			[]string{"We measured the tide at noon.", "It was higher than the forecast said."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := providers.Transcript{Language: "en", Text: "engine text", Segments: slices.Clone(tt.segs)}
			got := Clean(in)
			var kept []string
			for _, s := range got.Segments {
				kept = append(kept, strings.TrimSpace(s.Text))
			}
			if !slices.Equal(kept, tt.kept) {
				t.Fatalf("kept %q, want %q", kept, tt.kept)
			}
			if len(kept) != len(tt.segs) && got.Text != Join(got.Segments) {
				t.Errorf("text %q not rebuilt from the kept segments", got.Text)
			}
			if !slices.EqualFunc(in.Segments, tt.segs, func(a, b providers.Segment) bool { return a.Text == b.Text }) {
				t.Error("Clean changed its argument")
			}
		})
	}
}

func TestCollapseLoops(t *testing.T) {
	tests := []struct {
		in, want string
		looped   bool
	}{
		{strings.Repeat("I'm going to the store. ", 6) + "Then home.", "I'm going to the store. Then home.", true},
		{"And then " + strings.Repeat("the ", 12) + "end.", "And then the end.", true},
		{"We said " + strings.Repeat("Thank you! thank you. ", 5), "We said Thank you!", true},
		{strings.Repeat("ありがとうございます。", 5), "ありがとうございます。", true},
		// Kept: what people say.
		{"No, no, no, no, no.", "No, no, no, no, no.", false},
		{"哈哈哈哈哈哈", "哈哈哈哈哈哈", false},
		{strings.Repeat("Go team! ", 4) + "Go!", strings.Repeat("Go team! ", 4) + "Go!", false},
		{"An ordinary sentence without any loop in it at all, long enough to look.", "An ordinary sentence without any loop in it at all, long enough to look.", false},
	}
	for _, tt := range tests {
		got, looped := collapseLoops(tt.in)
		if looped != tt.looped || (looped && got != tt.want) {
			t.Errorf("collapseLoops(%q) = %q, %v; want %q, %v", tt.in, got, looped, tt.want, tt.looped)
		}
	}
	// A looped segment loses its words (they repeat the loop) and keeps its time.
	in := providers.Segment{Start: 0, End: sec(20), Text: strings.Repeat("over and over ", 6),
		Words: []providers.Word{word(0, sec(20), " over")}}
	got := cleanSegment(in)
	if got.Text != "over and over" || got.Words != nil || got.End != sec(20) {
		t.Errorf("cleanSegment = %+v", got)
	}
}

func TestCleanKeepsTextWhenNothingChanges(t *testing.T) {
	in := providers.Transcript{Text: "Engine's own text.", Segments: []providers.Segment{seg(0, sec(2), "Engine's own text.")}}
	if got := Clean(in); got.Text != in.Text {
		t.Errorf("text %q, want %q", got.Text, in.Text)
	}
	markedText := providers.Transcript{Text: "[MUSIC] Hello.", Segments: []providers.Segment{seg(0, sec(2), "Hello.")}}
	if got := Clean(markedText).Text; got != "Hello." {
		t.Errorf("text with a marker its segments lack cleaned to %q", got)
	}
	textOnly := providers.Transcript{Text: "[MUSIC] Hello."}
	if got := Clean(textOnly).Text; got != "Hello." {
		t.Errorf("text-only transcript cleaned to %q", got)
	}
}

func TestCleanWords(t *testing.T) {
	ms := time.Millisecond
	in := providers.Transcript{Segments: []providers.Segment{{
		Start: 0, End: sec(3), Text: " [ Silence ] Hello (laughs) world.",
		Words: []providers.Word{
			word(0, 200*ms, " ["), word(200*ms, 900*ms, " Silence"), word(900*ms, sec(1), " ]"),
			word(sec(1), sec(1.5), " Hello"), word(sec(1.5), sec(2), " (laughs)"), word(sec(2), sec(3), " world."),
		},
	}}}
	got := Clean(in).Segments[0]
	if got.Text != "Hello world." {
		t.Errorf("text %q", got.Text)
	}
	want := []providers.Word{word(sec(1), sec(1.5), " Hello"), word(sec(2), sec(3), " world.")}
	if !slices.Equal(got.Words, want) {
		t.Errorf("words %+v, want %+v", got.Words, want)
	}
	if len(in.Segments[0].Words) != 6 {
		t.Error("Clean changed its argument's words")
	}
}

// No format delivers a marker.
func TestRenderHasNoMarkers(t *testing.T) {
	tr := providers.Transcript{Language: "en", Duration: sec(40), Segments: []providers.Segment{
		seg(0, sec(5), "[BLANK_AUDIO]"), seg(sec(5), sec(8), "(music) We begin."), seg(sec(8), sec(10), "♪ ♪"),
		seg(sec(10), sec(12), "*applause* [ Silence ] Thank you all."), seg(sec(12), sec(40), "Thank you."),
	}}
	for _, f := range providers.TranscriptFormats {
		out, err := Render(tr, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"[B", "[ ", "(", "*", "♪", "BLANK", "music", "Silence"} {
			if strings.Contains(string(out), m) {
				t.Errorf("%s holds %q:\n%s", f, m, out)
			}
		}
		if !strings.Contains(string(out), "We begin.") || !strings.Contains(string(out), "Thank you all.") {
			t.Errorf("%s lost speech:\n%s", f, out)
		}
		if strings.Contains(string(out), "Thank you.") {
			t.Errorf("%s keeps the hallucinated thank you:\n%s", f, out)
		}
	}
}

// word is a word from start to end.
func word(start, end time.Duration, text string) providers.Word {
	return providers.Word{Start: start, End: end, Text: text}
}
