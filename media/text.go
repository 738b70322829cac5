package media

import (
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

// sentenceCut returns the byte offset just after the last sentence end in s[:end] that is
// followed by whitespace (or by end itself when s[end] is whitespace), or 0. A sentence end
// is . ! ? … or their CJK forms, optionally followed by closing quotes or brackets; a
// paragraph break (newline) also counts. CJK full stops need no following space.
func sentenceCut(s string, end int) int {
	best := 0
	for i, r := range s[:end] {
		j := i + utf8.RuneLen(r)
		switch r {
		case '\n':
			best = j
		case '。', '！', '？':
			best = closeRun(s, j, end)
		case '.', '!', '?', '…':
			k := closeRun(s, j, end)
			if k < len(s) {
				next, _ := utf8.DecodeRuneInString(s[k:])
				if !unicode.IsSpace(next) {
					continue
				}
			}
			best = k
		}
	}
	return best
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
