package orders

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPreviewTextCutsAtABoundary(t *testing.T) {
	long := strings.Repeat("word ", 60) // 300 characters, no sentence end
	tests := []struct{ name, text, want string }{
		{"short text whole", "  Hello there.  ", "Hello there."},
		{"sentence end in the second half", strings.Repeat("a", 150) + ". Next sentence goes on and on " + strings.Repeat("b", 100),
			strings.Repeat("a", 150) + "."},
		{"word boundary", long, strings.TrimSpace(long[:200])},
		{"no mid-word cut", strings.Repeat("a", 198) + " abcdef" + strings.Repeat("c", 50), strings.Repeat("a", 198)},
		{"no spaces (Chinese)", strings.Repeat("你好", 150), strings.Repeat("你好", 100)},
		{"Chinese sentence end", strings.Repeat("你", 150) + "。" + strings.Repeat("好", 150), strings.Repeat("你", 150) + "。"},
		// The jobs' rule (media.SentenceEnd): an Arabic question ends a sentence; a mark
		// glued to the next word does not; a closing quote stays with its sentence.
		{"Arabic question end", strings.Repeat("كلمة ", 30) + "حقا؟ " + strings.Repeat("نص ", 50),
			strings.TrimSpace(strings.Repeat("كلمة ", 30)) + " حقا؟"},
		{"Arabic mark inside a word", strings.Repeat("ب", 150) + "؟" + strings.Repeat("ت", 150), strings.Repeat("ب", 150) + "؟" + strings.Repeat("ت", 49)},
		{"closing quote", strings.Repeat("a", 150) + `. "Quoted." ` + strings.Repeat("b ", 50), strings.Repeat("a", 150) + `. "Quoted."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PreviewText(tt.text, 200)
			if got != tt.want {
				t.Errorf("got %q (%d), want %q", got, utf8.RuneCountInString(got), tt.want)
			}
			if utf8.RuneCountInString(got) > 200 {
				t.Errorf("preview of %d characters", utf8.RuneCountInString(got))
			}
		})
	}
}
