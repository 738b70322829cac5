package whisper

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"parla/providers"
)

// token is one of the model's output tokens with its own times (whisper.cpp's token
// timestamps). Text may be a piece of a word, or of a UTF-8 character.
type token struct {
	Text       string
	Start, End time.Duration
	// Special marks the model's control tokens (timestamps, start and end of text…), which
	// are not words.
	Special bool
}

// isSpecial reports whether text is one of whisper.cpp's control tokens by their names in its
// vocabulary: "[_BEG_]", "[_TT_150]", "[_SOT_]", "<|endoftext|>"…
func isSpecial(text string) bool {
	return (strings.HasPrefix(text, "[_") && strings.HasSuffix(text, "]")) ||
		(strings.HasPrefix(text, "<|") && strings.HasSuffix(text, "|>"))
}

// words merges a segment's tokens into words: a token that begins with a space starts a new
// word, and so does each character of a script written without spaces (Chinese, Japanese,
// Thai…), once the bytes before it form whole characters. Control tokens are dropped. A word
// runs from its first token's start to its last token's end, kept within [start, end] of
// the segment and in order. Each word's Text keeps its leading space, so the words joined
// are the segment's text.
func words(tokens []token, start, end time.Duration) []providers.Word {
	var out []providers.Word
	for _, t := range tokens {
		if t.Special || isSpecial(t.Text) || t.Text == "" {
			continue
		}
		if k := len(out) - 1; k >= 0 && !startsWord(out[k].Text, t.Text) {
			out[k].Text += t.Text
			out[k].End = max(out[k].End, t.End)
			continue
		}
		out = append(out, providers.Word{Start: t.Start, End: t.End, Text: t.Text})
	}
	// Times within the segment and never going back.
	last := start
	for i := range out {
		w := &out[i]
		w.Start = min(max(w.Start, last), end)
		w.End = min(max(w.End, w.Start), end)
		last = w.Start
	}
	return out
}

// startsWord reports whether a token text begins a new word after a word so far.
func startsWord(so, text string) bool {
	if text[0] == ' ' {
		return true
	}
	// Bytes of a character split across tokens stay together.
	if !utf8.ValidString(so) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(text)
	return r != utf8.RuneError && unspaced(r)
}

// unspaced reports whether r belongs to a script written without spaces between words.
func unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai,
		unicode.Lao, unicode.Khmer, unicode.Myanmar, unicode.Tibetan)
}
