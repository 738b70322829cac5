package media

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitText(t *testing.T) {
	tests := []struct {
		name string
		text string
		max  int
		want []string
	}{
		{"fits", "Hello there. How are you?", 100, []string{"Hello there. How are you?"}},
		{"blank", "  \n ", 10, nil},
		{"sentences", "One two. Three four. Five six.", 20, []string{"One two. Three four.", "Five six."}},
		{"question and quote", `He asked "why?" Then left. Done.`, 18, []string{`He asked "why?"`, "Then left. Done."}},
		{"no sentence end: words", "alpha beta gamma delta", 12, []string{"alpha beta", "gamma delta"}},
		{"decimal is not a sentence end", "Pay 3.50 now or later please", 12, []string{"Pay 3.50 now", "or later", "please"}},
		{"no space: hard cut", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"multibyte hard cut", "ééééé", 2, []string{"éé", "éé", "é"}},
		{"cjk full stop", "你好。世界你好。再见", 5, []string{"你好。", "世界你好。", "再见"}},
		{"newline", "first line\nsecond line", 15, []string{"first line", "second line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SplitText(tt.text, tt.max)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("SplitText(%q, %d) = %q, want %q", tt.text, tt.max, got, tt.want)
			}
		})
	}
}

// TestSplitTextInvariants checks the promises on a long mixed text at several limits:
// pieces within the limit, valid UTF-8, order kept, nothing lost but whitespace at cuts.
func TestSplitTextInvariants(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 30000; i++ {
		switch i % 4 {
		case 0:
			b.WriteString("The quick brown fox jumps over the lazy dog. ")
		case 1:
			b.WriteString("Ünïcödé façade — naïve café?  ")
		case 2:
			b.WriteString("東京は大きい都市です。")
		case 3:
			b.WriteString(strings.Repeat("x", 50) + "\n")
		}
	}
	text := b.String()
	for _, max := range []int{7, 64, 1000, 4096} {
		t.Run("max"+strconv.Itoa(max), func(t *testing.T) {
			pieces := SplitText(text, max)
			for i, p := range pieces {
				if n := utf8.RuneCountInString(p); n > max || n == 0 {
					t.Fatalf("piece %d has %d characters (max %d)", i, n, max)
				}
				if !utf8.ValidString(p) {
					t.Fatalf("piece %d is not valid UTF-8", i)
				}
			}
			if got, want := squash(strings.Join(pieces, "")), squash(text); got != want {
				t.Fatalf("rejoined text differs from input")
			}
		})
	}
}

func squash(s string) string { return strings.Join(strings.Fields(s), "") }
