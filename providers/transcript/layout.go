package transcript

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"parla/media"
	"parla/providers"
)

// piece is a unit of a segment's text with the time it is spoken.
type piece struct {
	unit
	start, end time.Duration
}

// layoutSegment lays one segment (with valid times) out as cues: its pieces grouped into
// cues of at most r.Lines lines, each cue broken where the text reads best. With word
// times, a cue also ends before its words span more than r.MaxDuration; time shared out
// by characters says nothing about when words are said, so there only the text decides
// (retime cuts a cue longer than r.MaxDuration).
func layoutSegment(s providers.Segment, r Rules) []cue {
	ps, timed := timedPieces(s)
	w := widths(ps)
	var out []cue
	for i := 0; i < len(ps); {
		j := i + 1
		for j < len(ps) && fits(ps[i:j+1], r) && (!timed || ps[j].end-ps[i].start <= r.MaxDuration) {
			j++
		}
		b := cueBreak(ps, w, i, j, r)
		out = append(out, cue{start: ps[i].start, end: ps[b-1].end, lines: lineBreak(ps, w, i, b, r), cps: r.MaxCPS})
		i = b
	}
	if len(out) > 0 {
		out[len(out)-1].end = max(out[len(out)-1].end, s.End)
	}
	return out
}

// fits reports whether the pieces fill at most r.Lines lines.
func fits(ps []piece, r Rules) bool {
	return len(fill(unitsOf(ps), r.LineRunes)) <= r.Lines
}

func unitsOf(ps []piece) []unit {
	us := make([]unit, len(ps))
	for i, p := range ps {
		us[i] = p.unit
	}
	return us
}

// widths returns w with w[k] the characters ps[:k] take on one line, spaces included, so
// that width(ps, w, a, b) is those of ps[a:b].
func widths(ps []piece) []int {
	w := make([]int, len(ps)+1)
	for k, p := range ps {
		w[k+1] = w[k] + utf8.RuneCountInString(p.text)
		if k > 0 && p.space {
			w[k+1]++
		}
	}
	return w
}

// width is the characters ps[a:b] take on one line.
func width(ps []piece, w []int, a, b int) int {
	n := w[b] - w[a]
	if a > 0 && ps[a].space {
		n-- // the space before ps[a] starts no line
	}
	return n
}

// cueBreak chooses where the cue of ps[i:] that can hold at most ps[i:j] ends: the b in
// (i, j] that scores best, counting how full the cue is (four points for a full one), how
// good a place it is to cut the text (see boundary; the segment's end counts as a
// sentence's), two points for a pause of at least pauseBreak in the speech, and how well
// the cue's own lines break (see lineScore). So the rest of a segment that fits one cue
// is still cut when its lines would break badly.
func cueBreak(ps []piece, w []int, i, j int, r Rules) int {
	full := float64(width(ps, w, i, j))
	best, bestScore := j, -1e9
	for b := i + 1; b <= j; b++ {
		score := 4 * float64(width(ps, w, i, b)) / full
		switch {
		case b == len(ps):
			score += 3 // the segment's end
		case ps[b].start-ps[b-1].end >= pauseBreak:
			score += 2 + boundary(ps, b, r)
		default:
			score += boundary(ps, b, r)
		}
		_, ls := lineScore(ps, w, i, b, r)
		score += ls
		if score >= bestScore {
			best, bestScore = b, score
		}
	}
	return best
}

// pauseBreak is a pause in speech long enough to end a cue at.
const pauseBreak = 300 * time.Millisecond

// lineScore chooses where the cue ps[a:b] breaks into two lines: at the k where both
// lines fit that scores best by boundary, less a point for every half line of difference
// in length. It returns -1 and 0 when the cue fits on one line, and -1 and -5 when no
// two lines fit (a piece longer than a line).
func lineScore(ps []piece, w []int, a, b int, r Rules) (int, float64) {
	if width(ps, w, a, b) <= r.LineRunes {
		return -1, 0
	}
	best, bestScore := -1, -5.0
	for k := a + 1; k < b; k++ {
		x, y := width(ps, w, a, k), width(ps, w, k, b)
		if x > r.LineRunes || y > r.LineRunes {
			continue
		}
		diff := x - y
		if diff < 0 {
			diff = -diff
		}
		score := boundary(ps, k, r) - 2*float64(diff)/float64(r.LineRunes)
		if best < 0 || score > bestScore {
			best, bestScore = k, score
		}
	}
	return best, bestScore
}

// lineBreak lays the cue ps[a:b] out in lines: one when it fits on one, else two cut
// where lineScore says. A piece longer than a line gets a line of its own.
func lineBreak(ps []piece, w []int, a, b int, r Rules) []string {
	us := unitsOf(ps[a:b])
	if width(ps, w, a, b) <= r.LineRunes {
		return []string{joinUnits(us)}
	}
	k, _ := lineScore(ps, w, a, b, r)
	if k < 0 || r.Lines < 2 {
		return wrap(us, r.LineRunes)
	}
	return []string{joinUnits(us[:k-a]), joinUnits(us[k-a:])}
}

// joinUnits writes units on one line.
func joinUnits(us []unit) string {
	var b strings.Builder
	for i, u := range us {
		if i > 0 && u.space {
			b.WriteByte(' ')
		}
		b.WriteString(u.text)
	}
	return b.String()
}

// clauseEnds is the punctuation that ends a clause, in the scripts served; what ends a
// sentence is media.EndsSentence, the rule the previews and the jobs follow too.
const clauseEnds = ",;:—–、，；：،؛"

// boundary scores cutting the text between ps[b-1] and ps[b] (a line or a cue break), by
// the subtitlers' rules: after a sentence (3) or a clause (2), before a joiner
// (conjunction, preposition, article: 1), after a Japanese particle before a new word
// (1); never after a joiner or a title, inside a number ("3 500", "三百三十"), between a
// number and its unit ("15 %", "3 km"), or between two capitalised words (a name: "John
// Smith"), each -3; inside a word of a script without spaces, -0.5.
func boundary(ps []piece, b int, r Rules) float64 {
	prev, next := ps[b-1].text, ps[b].text
	last, _ := utf8.DecodeLastRuneInString(prev)
	first, _ := utf8.DecodeRuneInString(next)
	score := 0.0
	lowerPrev, lowerNext := strings.ToLower(prev), strings.ToLower(trimPunct(next))
	title := slices.Contains(r.Titles, lowerPrev) // "Dr." ends no sentence
	switch {
	case media.EndsSentence(last) && !title:
		score += 3
	case strings.ContainsRune(clauseEnds, last):
		score += 2
	}
	if slices.Contains(r.Joiners, lowerNext) {
		score++
	}
	if slices.Contains(r.Joiners, lowerPrev) || title {
		score -= 3
	}
	if r.Particles != "" && strings.ContainsRune(r.Particles, last) && unicode.In(first, unicode.Han, unicode.Katakana) {
		score++
	}
	switch {
	case isNumber(prev) && (isNumber(next) || isUnit(next)), numeral(last) && numeral(first):
		score -= 3
	case capitalised(prev) && capitalised(next) && !unicode.IsPunct(last) && b >= 2 &&
		!media.EndsSentence(lastRune(ps[b-2].text)):
		score -= 3
	}
	if !ps[b].space && unspaced(last) && unspaced(first) && !unicode.IsPunct(last) {
		// Inside a word: kanji after kanji, katakana after katakana hold together most.
		if sameScript(last, first) {
			score -= 0.5
		}
	}
	return score
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

// trimPunct trims the punctuation around a word.
func trimPunct(s string) string {
	return strings.TrimFunc(s, unicode.IsPunct)
}

// isNumber reports whether s is digits, possibly grouped or signed ("3", "1,500", "−2.5").
func isNumber(s string) bool {
	s = strings.TrimRight(s, ".,;:")
	digits := 0
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			digits++
		case strings.ContainsRune("+-−.,'’ %$€£¥", r):
		default:
			return false
		}
	}
	return digits > 0
}

// isUnit reports whether s is a sign or unit that goes with the number before it ("%",
// "km", "€", "kg.", "млн").
func isUnit(s string) bool {
	s = strings.ToLower(strings.TrimRight(s, ".,;:!?"))
	return slices.Contains(numberUnits, s)
}

// numberUnits are the signs and units written after numbers, lower case.
var numberUnits = strings.Fields(`% ‰ ° °c °f € $ £ ¥ ₽ km m cm mm kg g mg t l ml h min s ms
	kb mb gb tb kw w v hz khz mhz ghz mph kmh km/h euros euro dollars pounds percent
	км м см мм кг г л мл ч мин с тыс млн млрд руб рублей евро долларов процентов
	kilómetros metros kilos años`)

// numeral reports whether r is a digit or a Chinese or Japanese numeral character.
func numeral(r rune) bool {
	return unicode.IsDigit(r) || strings.ContainsRune("〇零一二三四五六七八九十百千万億亿兆", r)
}

// capitalised reports whether a word starts with an upper-case letter.
func capitalised(s string) bool {
	r, _ := utf8.DecodeRuneInString(strings.TrimLeftFunc(s, unicode.IsPunct))
	return unicode.IsUpper(r)
}

// sameScript reports whether two characters are both kanji (Han) or both katakana.
func sameScript(a, b rune) bool {
	return (unicode.Is(unicode.Han, a) && unicode.Is(unicode.Han, b)) ||
		(unicode.Is(unicode.Katakana, a) && unicode.Is(unicode.Katakana, b))
}

// timedPieces cuts a segment's text into pieces with the time each is spoken: from the
// segment's words when it has them and they spell the same letters as its text (OpenAI's
// words leave out punctuation, whisper's are tokens), else the segment's time shared out
// in proportion to the characters before each piece.
// It reports whether the times come from words.
func timedPieces(s providers.Segment) ([]piece, bool) {
	us := units(s.Text)
	ps := make([]piece, len(us))
	for i, u := range us {
		ps[i].unit = u
	}
	if len(s.Words) > 0 && wordTimes(ps, s) {
		return ps, true
	}
	total := 0
	for _, u := range us {
		total += utf8.RuneCountInString(u.text)
	}
	span := s.End - s.Start
	done := 0
	for i := range ps {
		ps[i].start = s.Start + share(span, done, total)
		done += utf8.RuneCountInString(ps[i].text)
		ps[i].end = s.Start + share(span, done, total)
	}
	return ps, false
}

// share is part/total of span, rounded down to the millisecond.
func share(span time.Duration, part, total int) time.Duration {
	if total == 0 {
		return 0
	}
	d := time.Duration(float64(span) * float64(part) / float64(total))
	return d.Truncate(time.Millisecond)
}

// letter is one letter or digit of a text, lower case, and the index of the piece or
// word it is in.
type letter struct {
	r  rune
	in int
}

func letters(texts []string) []letter {
	var out []letter
	for i, t := range texts {
		for _, r := range t {
			if unicode.IsLetter(r) || unicode.IsNumber(r) {
				out = append(out, letter{unicode.ToLower(r), i})
			}
		}
	}
	return out
}

// wordTimes gives each piece the time of the words its letters are in: from the start of
// the word of its first letter to the end of the word of its last. A piece without
// letters (a dash) takes the end of the piece before. Times are kept within the segment
// and never go back. It reports false, changing nothing, when the words spell other
// letters than the text.
func wordTimes(ps []piece, s providers.Segment) bool {
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = p.text
	}
	words := make([]string, len(s.Words))
	for i, w := range s.Words {
		words[i] = w.Text
	}
	lt, lw := letters(texts), letters(words)
	if len(lt) == 0 || len(lt) != len(lw) {
		return false
	}
	for k := range lt {
		if lt[k].r != lw[k].r {
			return false
		}
	}
	clamp := func(d time.Duration) time.Duration {
		return min(max(d, s.Start), s.End).Truncate(time.Millisecond)
	}
	first := make([]int, len(ps))
	lastW := make([]int, len(ps))
	for i := range first {
		first[i] = -1
	}
	for k, l := range lt {
		if first[l.in] < 0 {
			first[l.in] = lw[k].in
		}
		lastW[l.in] = lw[k].in
	}
	at := s.Start
	for i := range ps {
		if first[i] < 0 {
			ps[i].start, ps[i].end = at, at
			continue
		}
		ps[i].start = max(clamp(s.Words[first[i]].Start), at)
		ps[i].end = max(clamp(s.Words[lastW[i]].End), ps[i].start)
		at = ps[i].start
	}
	return true
}

// retime makes sorted cues keep the hard rules, then softens them toward the others:
//  1. no cue lasts more than r.MaxDuration, and every cue lasts at least a millisecond;
//  2. each cue starts at least r.MinGap after the previous one ends: a cue running into
//     the next is cut short, down to its own length or r.MinDuration when shorter; what
//     still overlaps (segments that overlap) moves later, keeping that length;
//  3. a cue shorter than r.MinDuration, or read faster than r.MaxCPS, is extended into the
//     silence after it, up to r.MaxDuration, r.MinGap before the next cue and the end of
//     the audio (when known and later).
func retime(cs []cue, r Rules, audio time.Duration) {
	for i := range cs {
		c := &cs[i]
		c.end = min(c.end, satAdd(c.start, r.MaxDuration))
		c.end = max(c.end, satAdd(c.start, time.Millisecond))
	}
	for i := range cs {
		c := &cs[i]
		natural := c.end - c.start
		if i > 0 {
			if earliest := satAdd(cs[i-1].end, r.MinGap); c.start < earliest {
				c.start = earliest
				c.end = max(c.end, satAdd(c.start, min(natural, r.MinDuration)))
				c.end = min(c.end, satAdd(c.start, r.MaxDuration))
				c.end = max(c.end, satAdd(c.start, time.Millisecond))
				natural = c.end - c.start
			}
		}
		if i+1 < len(cs) {
			if cut := cs[i+1].start - r.MinGap; c.end > cut {
				c.end = max(cut, satAdd(c.start, min(natural, r.MinDuration)))
			}
		}
	}
	for i := range cs {
		c := &cs[i]
		chars := 0
		for _, l := range c.lines {
			chars += utf8.RuneCountInString(l)
		}
		cps := r.MaxCPS
		if c.cps > 0 {
			cps = c.cps
		}
		want := max(r.MinDuration, time.Duration(float64(chars)/cps*float64(time.Second)))
		want = (want + time.Millisecond - 1).Truncate(time.Millisecond) // printed times are whole milliseconds
		end := min(satAdd(c.start, want), satAdd(c.start, r.MaxDuration))
		if i+1 < len(cs) {
			end = min(end, cs[i+1].start-r.MinGap)
		} else if audio > c.end {
			end = min(end, audio)
		} else if audio > 0 {
			end = c.end
		}
		c.end = max(c.end, end)
	}
}

// satAdd is a+d, at most endOfTime.
func satAdd(a, d time.Duration) time.Duration {
	if a > endOfTime-d {
		return endOfTime
	}
	return a + d
}
