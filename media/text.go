package media

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitText cuts text into pieces of at most max characters (Unicode code points) for
// speech engines that take limited input per call. Each cut falls, by preference, after the
// last sentence end that fits, else at the last whitespace, else exactly at max characters;
// a multi-byte character is never split. Whitespace around a cut is dropped, so joining the
// pieces with a space gives the text back modulo whitespace at the cuts. Text within the
// limit comes back as the single piece it is; blank text gives no pieces.
func SplitText(text string, max int) []string {
	if max <= 0 {
		max = 1
	}
	var pieces []string
	rest := text
	for {
		if strings.TrimSpace(rest) == "" {
			return pieces
		}
		if utf8.RuneCountInString(rest) <= max {
			if len(pieces) == 0 {
				return []string{rest}
			}
			return append(pieces, strings.TrimSpace(rest))
		}
		end := byteIndexOfRune(rest, max) // rest[:end] is the longest piece allowed
		cut := sentenceCut(rest, end)
		if cut <= 0 {
			cut = spaceCut(rest, end)
		}
		if cut <= 0 {
			cut = end
		}
		if p := strings.TrimRightFunc(rest[:cut], unicode.IsSpace); p != "" {
			pieces = append(pieces, strings.TrimLeftFunc(p, unicode.IsSpace))
		}
		rest = strings.TrimLeftFunc(rest[cut:], unicode.IsSpace)
	}
}

// byteIndexOfRune returns the byte offset of the n-th rune of s (len(s) if s is shorter).
func byteIndexOfRune(s string, n int) int {
	i := 0
	for k := range s {
		if i == n {
			return k
		}
		i++
	}
	return len(s)
}

// sentenceCut returns the byte offset just after the last sentence end in s[:end] (see
// SentenceEnd), or 0; a paragraph break (newline) also counts, as a cut for the engines.
func sentenceCut(s string, end int) int {
	best := 0
	for i, r := range s[:end] {
		if r == '\n' {
			best = i + 1
		} else if k, ok := SentenceEnd(s, i, end); ok {
			best = k
		}
	}
	return best
}

// fullWidthEnds are the CJK sentence ends, which need no space after them.
const fullWidthEnds = "。！？"

// sentenceEnds are the marks that end a sentence in the scripts Parla serves: . ! ? … ‼ ⁉,
// the Arabic question mark and the CJK full-width forms.
const sentenceEnds = ".!?…‼⁉؟" + fullWidthEnds

// EndsSentence reports whether r is a mark that ends a sentence: . ! ? … ‼ ⁉, the Arabic
// question mark ؟ or the CJK 。！？. It is the one list that previews, jobs and subtitles use.
func EndsSentence(r rune) bool { return strings.ContainsRune(sentenceEnds, r) }

// SentenceEnd is the one end-of-sentence rule, for the jobs' text splitting and the
// previews' cut alike: it reports whether the rune at byte i of s ends a sentence, and the
// byte offset where that sentence ends (after the mark and any closing quotes or brackets
// that follow it, not beyond limit). A CJK full stop ends one wherever it stands; the other
// marks only when whitespace or the end of s follows, so "3.50" and "e.g.x" end nothing.
func SentenceEnd(s string, i, limit int) (int, bool) {
	r, n := utf8.DecodeRuneInString(s[i:])
	if !EndsSentence(r) {
		return 0, false
	}
	k := closeRun(s, i+n, limit)
	if !strings.ContainsRune(fullWidthEnds, r) && k < len(s) {
		if next, _ := utf8.DecodeRuneInString(s[k:]); !unicode.IsSpace(next) {
			return 0, false
		}
	}
	return k, true
}

// closeRun extends a sentence end at j over closing quotes and brackets, not beyond end.
func closeRun(s string, j, end int) int {
	for j < end {
		r, n := utf8.DecodeRuneInString(s[j:])
		if !strings.ContainsRune(`"')]}»”’」』`, r) {
			break
		}
		j += n
	}
	return j
}

// spaceCut returns the byte offset of the last whitespace in s[:end+1] (a space right at the
// limit still makes a clean cut), or 0.
func spaceCut(s string, end int) int {
	limit := end
	if limit < len(s) {
		_, n := utf8.DecodeRuneInString(s[limit:])
		limit += n
	}
	best := 0
	for i, r := range s[:limit] {
		if unicode.IsSpace(r) {
			best = i
		}
	}
	return best
}

// SplitEven cuts text into n pieces of about equal length, in characters (Unicode code
// points), for an engine that speaks the pieces in parallel: the time of the whole is
// the time of its longest piece, so SplitText's pieces (full ones and a short last one)
// would leave a core idle at the end. Each cut falls at the sentence end (see SentenceEnd)
// or newline nearest to its ideal place, k·len/n characters in, when one lies within half
// a piece of it; else at the nearest whitespace within that distance; else exactly there
// (a multi-byte character is never split). Whitespace around a cut is dropped, as in
// SplitText; blank pieces are left out, so a short text may give fewer than n pieces.
func SplitEven(text string, n int) []string {
	total := utf8.RuneCountInString(text)
	if n <= 1 || total <= n {
		return SplitText(text, max(total, 1))
	}
	sentences, spaces := cutCandidates(text)
	reach := total / (2 * n)
	var pieces []string
	start, startRune := 0, 0
	for k := 1; k <= n; k++ {
		end := len(text)
		if k < n {
			target := k * total / n
			c, ok := nearestCut(sentences, target, reach, startRune)
			if !ok {
				c, ok = nearestCut(spaces, target, reach, startRune)
			}
			if !ok {
				c = textCut{at: byteIndexOfRune(text, target), rune: target}
			}
			end, startRune = c.at, c.rune
		}
		if p := strings.TrimSpace(text[start:end]); p != "" {
			pieces = append(pieces, p)
		}
		start = end
	}
	return pieces
}

// textCut is a place text may be cut: the byte offset and the character index it falls at.
type textCut struct{ at, rune int }

// cutCandidates lists, in order, the places after each sentence end or newline, and the
// places of each whitespace character, in text.
func cutCandidates(text string) (sentences, spaces []textCut) {
	ri := 0
	for i, r := range text {
		switch {
		case r == '\n':
			sentences = append(sentences, textCut{i + 1, ri + 1})
		case unicode.IsSpace(r):
			spaces = append(spaces, textCut{i, ri})
		default:
			if k, ok := SentenceEnd(text, i, len(text)); ok {
				sentences = append(sentences, textCut{k, ri + utf8.RuneCountInString(text[i:k])})
			}
		}
		ri++
	}
	return sentences, spaces
}

// nearestCut returns the cut of cuts (in order) nearest to character target, at most reach
// characters from it and after character after.
func nearestCut(cuts []textCut, target, reach, after int) (textCut, bool) {
	i, _ := slices.BinarySearchFunc(cuts, target, func(c textCut, t int) int { return cmp.Compare(c.rune, t) })
	best, found := textCut{}, false
	for _, j := range []int{i - 1, i} {
		if j < 0 || j >= len(cuts) || cuts[j].rune <= after {
			continue
		}
		d := abs(cuts[j].rune - target)
		if d <= reach && (!found || d < abs(best.rune-target)) {
			best, found = cuts[j], true
		}
	}
	return best, found
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
