package transcript

import (
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"parla/providers"
)

// Clean returns t without what an engine writes that nobody said: non-speech annotations
// and markers anywhere in the text ("[BLANK_AUDIO]", "[ Silence ]", "(music)", "*applause*",
// "♪", "<|endoftext|>"), segments left with no letter or digit, and segments dropped by the
// hallucination rule (see the package documentation). Words are cleaned like their
// segment's text. When a segment changes, the transcript's text is rebuilt from the kept
// segments. t is never modified. Render calls it, so every engine's output is cleaned.
func Clean(t providers.Transcript) providers.Transcript {
	if len(t.Segments) == 0 {
		t.Text = stripAnnotations(t.Text)
		if credit(normalized(t.Text)) {
			t.Text = ""
		}
		return t
	}
	changed := false
	segs := make([]providers.Segment, 0, len(t.Segments))
	for _, s := range t.Segments {
		c := cleanSegment(s)
		if c.Text != s.Text || len(c.Words) != len(s.Words) {
			changed = true
		}
		segs = append(segs, c)
	}
	kept := dropHallucinations(segs)
	if changed || len(kept) != len(t.Segments) {
		t.Text = Join(kept)
	} else {
		t.Text = stripAnnotations(t.Text) // an engine's text may hold what its segments do not
	}
	t.Segments = kept
	return t
}

// cleanSegment strips annotations from a segment's text and from its words. Words left
// empty are dropped; the slice is copied when anything changes.
func cleanSegment(s providers.Segment) providers.Segment {
	s.Text = stripAnnotations(s.Text)
	if text, looped := collapseLoops(s.Text); looped {
		// The words repeat the loop: the segment's time is shared out by characters.
		s.Text, s.Words = text, nil
	}
	if len(s.Words) == 0 {
		return s
	}
	var joined strings.Builder
	for _, w := range s.Words {
		joined.WriteString(w.Text)
	}
	spans := annotationSpans(joined.String())
	if len(spans) == 0 {
		return s
	}
	words := make([]providers.Word, 0, len(s.Words))
	at, k := 0, 0 // byte of the joined words; the first span not behind it
	for _, w := range s.Words {
		var b strings.Builder
		for i := 0; i < len(w.Text); i++ {
			for k < len(spans) && spans[k][1] <= at+i {
				k++
			}
			if k == len(spans) || at+i < spans[k][0] {
				b.WriteByte(w.Text[i])
			}
		}
		at += len(w.Text)
		if strings.TrimSpace(b.String()) == "" {
			continue
		}
		w.Text = b.String()
		words = append(words, w)
	}
	s.Words = words
	return s
}

// stripAnnotations removes every annotation span of s; when it removes any, runs of
// white space become one space and the ends are trimmed.
func stripAnnotations(s string) string {
	spans := annotationSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp[0]])
		b.WriteByte(' ')
		at = sp[1]
	}
	b.WriteString(s[at:])
	return strings.Join(strings.Fields(b.String()), " ")
}

// maxAnnotationRunes bounds a bracketed annotation: a longer bracket is more likely text.
const maxAnnotationRunes = 60

// annotationSpans returns the byte ranges of s that are annotations, in order and
// disjoint:
//   - anything in square brackets ([BLANK_AUDIO], [ Silence ], [MUSIC], [inaudible],
//     [Música], [音楽]) and whisper's special tokens <|…|>: no engine writes speech there;
//   - parentheses holding a sound word ((music), (upbeat music), (laughs), （拍手）),
//     since parentheses can also hold spoken words;
//   - a few words between asterisks (*applause*, *laughs*; not "2 * 3 * 4");
//   - music notes (♪ ♫ ♬ ♩ 🎵 🎶), the sung words between them kept.
func annotationSpans(s string) [][2]int {
	var spans [][2]int
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if end := annotationEnd(s, i, r, size); end > i {
			spans = append(spans, [2]int{i, end})
			i = end
			continue
		}
		i += size
	}
	return spans
}

// musicNotes are the symbols engines write for music or around sung words.
const musicNotes = "♪♫♬♩🎵🎶"

// annotationEnd returns where an annotation starting at byte i (rune r of size bytes)
// ends, or i when none starts there.
func annotationEnd(s string, i int, r rune, size int) int {
	switch {
	case strings.ContainsRune(musicNotes, r):
		return i + size
	case r == '[' || r == '［':
		if j := closing(s, i+size, "]］"); j > 0 {
			return j
		}
	case r == '<' && strings.HasPrefix(s[i:], "<|"):
		if j := strings.Index(s[i+2:], "|>"); j >= 0 && utf8.RuneCountInString(s[i:i+2+j]) <= maxAnnotationRunes {
			return i + 2 + j + 2
		}
	case r == '(' || r == '（':
		if j := closing(s, i+size, ")）"); j > 0 && soundWords(s[i+size:j-closingSize(s, j)]) {
			return j
		}
	case r == '*':
		if j := closing(s, i+size, "*"); j > 0 {
			inner := strings.TrimSpace(s[i+size : j-1])
			words := strings.IndexFunc(inner, func(r rune) bool { return !unicode.IsLetter(r) && r != ' ' && r != '-' }) < 0
			if inner != "" && words && len(strings.Fields(inner)) <= 6 {
				return j
			}
		}
	}
	return i
}

// closing returns the byte just past the first of the runes in closers after from, within
// maxAnnotationRunes and before any newline or opening bracket of the same kind, or 0.
func closing(s string, from int, closers string) int {
	n := 0
	for j, r := range s[from:] {
		if strings.ContainsRune(closers, r) {
			return from + j + utf8.RuneLen(r)
		}
		if r == '\n' || n >= maxAnnotationRunes {
			return 0
		}
		n++
	}
	return 0
}

// closingSize is the size of the closing rune that ends just before byte end.
func closingSize(s string, end int) int {
	_, size := utf8.DecodeLastRuneInString(s[:end])
	return size
}

// soundPrefixes start the words that describe sounds rather than speech, in the
// languages whisper annotates in; soundSubstrings are those of scripts without spaces.
var (
	soundPrefixes = []string{
		"music", "applau", "laugh", "chuckl", "giggl", "cheer", "sigh", "cough", "silen",
		"inaudib", "indistinct", "unintelligib", "noise", "static", "beep", "footstep",
		"gasp", "sniff", "breath", "clap", "whistl", "crying", "sob", "scream", "mumbl",
		"groan", "murmur", "chatter", "background", "instrumental", "upbeat", "dramatic",
		"foreign", "blank", "crowd", "audience", "bird", "dog", "thunder", "wind", "engine",
		"música", "musica", "aplauso", "risa", "silencio", "ruido", "inaudible",
		"музык", "аплодисмент", "смех", "тишин", "шум", "неразборчив",
		"موسيقى", "تصفيق", "ضحك", "صمت",
	}
	soundSubstrings = []string{"音楽", "拍手", "笑", "音乐", "掌声", "歓声", "沈黙", "静音", "无声", "BGM"}
)

// soundWords reports whether the text of a parenthesis describes sounds: at most six
// words, one of them a sound word.
func soundWords(inner string) bool {
	words := strings.FieldsFunc(strings.ToLower(inner), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	if len(words) == 0 || len(words) > 6 {
		return false
	}
	for _, w := range words {
		for _, p := range soundPrefixes {
			if strings.HasPrefix(w, p) {
				return true
			}
		}
	}
	for _, sub := range soundSubstrings {
		if strings.Contains(inner, sub) {
			return true
		}
	}
	return false
}

// The hallucination rule. Whisper, trained on subtitles of videos, writes their
// boilerplate over silence and music. A segment is dropped when:
//  1. it has no letter or digit left once annotations are gone ("...", "-", "♪ ♪");
//  2. it is a subtitle credit (credits), which nobody speaks;
//  3. it is one of the phrases whisper is known to invent (hallucinationPhrases) and it
//     is slow: under slowLettersPerSecond letters a second of its span, or of its words'
//     when it has word times ("Thank you." over 3 s of silence), since the phrase said by
//     a person takes a second or two (a character of Chinese, Japanese, Thai… counts as
//     two letters);
//  4. it is short (at most sparseMaxLetters letters) and lasts at least sparseSpan (a word
//     stretched over a window of silence);
//  5. it repeats the segment before it, the third time or later in a row (the decoder
//     looping); the first two are kept, as people do say "No. No.".
//
// The decoder also loops inside a segment: a phrase said loopRepeats times or more in a
// row, loopMinWords words at least in all (loopMinRunes characters in scripts without
// spaces), is kept once (see collapseLoops).
const (
	slowLettersPerSecond = 3.0
	sparseMaxLetters     = 12
	sparseSpan           = 8 * time.Second
	loopKeep             = 2
	loopRepeats          = 5
	loopMinWords         = 10
	loopMinRunes         = 20
	loopMaxPhrase        = 12 // the longest phrase looked for, in words or characters
)

// collapseLoops returns text with every phrase repeated loopRepeats times or more in a row
// kept once, and whether it found one. Words are compared in lower case without
// punctuation; in a script without spaces the phrase is a run of characters.
func collapseLoops(text string) (string, bool) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return text, false
	}
	if r, _ := utf8.DecodeRuneInString(fields[0]); len(fields) < loopMinWords && unspaced(r) {
		runes := []rune(text)
		keys := make([]string, len(runes))
		for i, r := range runes {
			keys[i] = string(r)
		}
		keep, looped := dropRepeats(keys, loopMinRunes)
		if !looped {
			return text, false
		}
		var b strings.Builder
		for i, k := range keep {
			if k {
				b.WriteRune(runes[i])
			}
		}
		return b.String(), true
	}
	keys := make([]string, len(fields))
	for i, f := range fields {
		keys[i] = normalized(f)
	}
	keep, looped := dropRepeats(keys, loopMinWords)
	if !looped {
		return text, false
	}
	var kept []string
	for i, f := range fields {
		if keep[i] {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " "), true
}

// dropRepeats marks which keys to keep: of a phrase (1 to loopMaxPhrase keys) repeated
// loopRepeats times or more in a row over minTotal keys at least, the first occurrence.
func dropRepeats(keys []string, minTotal int) ([]bool, bool) {
	keep := make([]bool, len(keys))
	for i := range keep {
		keep[i] = true
	}
	looped := false
	for i := 0; i < len(keys); {
		advanced := false
		for n := 1; n <= loopMaxPhrase && i+2*n <= len(keys); n++ {
			k := 1
			for i+(k+1)*n <= len(keys) && slices.Equal(keys[i+k*n:i+(k+1)*n], keys[i:i+n]) {
				k++
			}
			if k >= loopRepeats && k*n >= minTotal {
				for j := i + n; j < i+k*n; j++ {
					keep[j] = false
				}
				looped, advanced = true, true
				i += k * n
				break
			}
		}
		if !advanced {
			i++
		}
	}
	return keep, looped
}

// hallucinationPhrases are whisper's usual inventions over silence, normalized (lower
// case, letters and digits only, single spaces). They are also things people say, which
// is why rule 3 wants them slow.
var hallucinationPhrases = []string{
	"you", "thank you", "thank you very much", "thank you so much", "thanks", "thanks for watching",
	"thank you for watching", "thanks for listening", "thank you for listening",
	"please subscribe", "please subscribe to my channel", "like and subscribe",
	"see you next time", "see you in the next video", "bye", "bye bye", "the end",
	"gracias", "gracias por ver", "gracias por ver el video", "muchas gracias", "suscríbete",
	"спасибо", "спасибо за просмотр", "продолжение следует", "подписывайтесь на канал",
	"ご視聴ありがとうございました", "ありがとうございました", "チャンネル登録よろしくお願いします",
	"谢谢观看", "谢谢大家", "感谢观看", "请订阅", "请不吝点赞 订阅 转发 打赏支持明镜与点点栏目",
	"شكرا", "شكرا للمشاهدة", "شكرا لكم", "اشتركوا في القناة",
	"merci", "merci davoir regardé", "danke", "vielen dank", "obrigado", "grazie",
}

// creditMarks are in subtitle credits (normalized), which whisper copies from its
// training data; a segment holding one is dropped wherever it is.
var creditMarks = []string{
	"amara org", "subtitles by", "subtitled by", "captions by", "captioning by",
	"transcription by", "transcribed by", "subtitles made by",
	"subtítulos por", "subtítulos realizados", "subtitulado por", "sous titres", "soustitres",
	"untertitel", "субтитры", "редактор субтитров", "字幕由", "字幕志愿者", "字幕提供",
	"ترجمة نانسي قنقر",
}

// credit reports whether a normalized text is a subtitle credit.
func credit(norm string) bool {
	for _, m := range creditMarks {
		if strings.Contains(norm, m) {
			return true
		}
	}
	return false
}

// dropHallucinations returns the segments the rule above keeps, in order; segs holds
// cleaned segments and is not modified.
func dropHallucinations(segs []providers.Segment) []providers.Segment {
	out := make([]providers.Segment, 0, len(segs))
	prev, run := "", 0
	for _, s := range segs {
		norm := normalized(s.Text)
		if norm == prev && norm != "" {
			run++
		} else {
			prev, run = norm, 1
		}
		if hallucination(s, norm) || run > loopKeep {
			continue
		}
		out = append(out, s)
	}
	return out
}

// hallucination applies rules 1–4 to one segment whose normalized text is norm.
func hallucination(s providers.Segment, norm string) bool {
	letters := 0
	for _, r := range norm {
		switch {
		case unspaced(r):
			letters += 2 // a character of these scripts is about a syllable
		case r != ' ':
			letters++
		}
	}
	if letters == 0 || credit(norm) {
		return true
	}
	span := s.End - s.Start
	if n := len(s.Words); n > 0 && s.Words[n-1].End > s.Words[0].Start {
		span = s.Words[n-1].End - s.Words[0].Start // the time its words are said in
	}
	if span <= 0 {
		return false // no time to judge by
	}
	perSecond := float64(letters) / span.Seconds()
	if slices.Contains(hallucinationPhrases, norm) && perSecond < slowLettersPerSecond {
		return true
	}
	return letters <= sparseMaxLetters && span >= sparseSpan
}

// normalized is s in lower case with only its letters, digits and single spaces (an
// apostrophe is dropped, other punctuation becomes a space).
func normalized(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r == '\'' || r == '’':
		case unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		default:
			space = true
		}
	}
	return b.String()
}
