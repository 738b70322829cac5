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
		{"arabic question mark", "نعم؟ لا شيء هنا", 12, []string{"نعم؟", "لا شيء هنا"}},
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

// TestSentenceEnd is the one end-of-sentence rule, as the jobs' splitting and the previews'
// cut see it: the text cut after every sentence end it finds.
func TestSentenceEnd(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"latin", "One two. Three four! Five?", []string{"One two.", "Three four!", "Five?"}},
		{"decimal and abbreviation glued", "Pay 3.50 now, e.g.x", []string{"Pay 3.50 now, e.g.x"}},
		{"closing quote", `He asked "why?" Then left.`, []string{`He asked "why?"`, "Then left."}},
		{"ellipsis", "Wait… then go... now", []string{"Wait…", "then go...", "now"}},
		{"spanish ¿¡ open nothing", "¿Qué tal? ¡Muy bien! Gracias.", []string{"¿Qué tal?", "¡Muy bien!", "Gracias."}},
		{"arabic question mark", "كيف حالك؟ أنا بخير. شكرا", []string{"كيف حالك؟", "أنا بخير.", "شكرا"}},
		{"arabic mark inside a word", "ما هذا؟لا", []string{"ما هذا؟لا"}},
		{"russian", "Привет! Как дела?", []string{"Привет!", "Как дела?"}},
		{"japanese, with brackets", "東京は大きい。「本当？」と聞いた。", []string{"東京は大きい。", "「本当？」", "と聞いた。"}},
		{"chinese", "你好！世界。再见", []string{"你好！", "世界。", "再见"}},
		{"double marks", "Stop‼ Really⁉ Yes", []string{"Stop‼", "Really⁉", "Yes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			from := 0
			for i := range tt.text {
				if k, ok := SentenceEnd(tt.text, i, len(tt.text)); ok && k > from {
					got = append(got, strings.TrimSpace(tt.text[from:k]))
					from = k
				}
			}
			if rest := strings.TrimSpace(tt.text[from:]); rest != "" {
				got = append(got, rest)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("sentences of %q: %q, want %q", tt.text, got, tt.want)
			}
		})
	}
	// A closing quote beyond the limit is not the sentence's: the mark before it ends
	// nothing, since what follows it within the text is no space.
	if _, ok := SentenceEnd(`Hi." x`, 2, 3); ok {
		t.Error(`"Hi." cut before its closing quote`)
	}
	if k, ok := SentenceEnd(`Hi." x`, 2, 4); !ok || k != 4 {
		t.Errorf(`"Hi." with its quote: %d %v, want 4 true`, k, ok)
	}
}

func TestSplitEven(t *testing.T) {
	tests := []struct {
		name string
		text string
		n    int
		want []string
	}{
		{"one piece", "Hello there. How are you?", 1, []string{"Hello there. How are you?"}},
		{"blank", "  \n ", 3, nil},
		{"sentence nearest the middle", "One two. Three four. Five six. Seven.", 2, []string{"One two. Three four.", "Five six. Seven."}},
		// SplitText with a maximum of 20 gives "One two. Three four." and a short rest.
		{"thirds", "Aa bb. Cc dd. Ee ff. Gg hh. Ii jj. Kk ll.", 3, []string{"Aa bb. Cc dd.", "Ee ff. Gg hh.", "Ii jj. Kk ll."}},
		{"sentence end within half a piece", "alpha beta gamma delta. epsilon zeta eta theta iota kappa", 2, []string{"alpha beta gamma delta.", "epsilon zeta eta theta iota kappa"}},
		{"no sentence end near: a space", "Alpha. beta gamma delta epsilon zeta eta theta iota kappa", 2, []string{"Alpha. beta gamma delta epsilon", "zeta eta theta iota kappa"}},
		{"no space: exact", "abcdefghij", 2, []string{"abcde", "fghij"}},
		{"multibyte exact", "éééééé", 3, []string{"éé", "éé", "éé"}},
		{"cjk full stop", "你好。世界你好。再见你好。", 2, []string{"你好。世界你好。", "再见你好。"}},
		{"newline", "first line here\nsecond line here", 2, []string{"first line here", "second line here"}},
		{"more pieces than characters", "ab", 5, []string{"ab"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SplitEven(tt.text, tt.n)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("SplitEven(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.want)
			}
		})
	}
}

// TestSplitEvenBalance: on prose, n pieces whose lengths differ from an even share by at
// most a sentence, each ending a sentence, and nothing lost but whitespace at the cuts.
func TestSplitEvenBalance(t *testing.T) {
	const sentence = "Each sentence here is ordinary prose, with commas, 42 and 2026, and questions? Yes. "
	text := strings.Repeat(sentence, 600)[:50000]
	total := utf8.RuneCountInString(text)
	for _, n := range []int{2, 3, 4, 8} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			pieces := SplitEven(text, n)
			if len(pieces) != n {
				t.Fatalf("%d pieces, want %d", len(pieces), n)
			}
			for i, p := range pieces {
				if d := utf8.RuneCountInString(p) - total/n; d > len(sentence) || d < -len(sentence) {
					t.Errorf("piece %d has %d characters, an even share is %d", i, utf8.RuneCountInString(p), total/n)
				}
				if i < n-1 && !EndsSentence([]rune(p)[utf8.RuneCountInString(p)-1]) {
					t.Errorf("piece %d ends %q, not a sentence", i, p[len(p)-10:])
				}
			}
			if squash(strings.Join(pieces, "")) != squash(text) {
				t.Fatal("rejoined text differs from input")
			}
		})
	}
}
