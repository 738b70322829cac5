package transcript

import (
	"strings"
	"time"
	"unicode"
)

// Rules are the readability limits of the subtitles (srt, vtt) of one language, after
// the timed-text style guides professional subtitlers follow (Netflix's, per language).
// The hard limits always hold in what the renderers write: Lines, LineRunes (unless one
// unbreakable word is longer), MinGap and MaxDuration. MinDuration and MaxCPS are met by
// breaking cues and extending them into the silence that follows, as far as the speech
// leaves room: fast speech can exceed MaxCPS and a short cue right before the next one
// can stay shorter than MinDuration.
type Rules struct {
	// Language is the code the rules are for ("" for the default).
	Language string
	// Lines is the most lines in one cue.
	Lines int
	// LineRunes is the most characters on one line.
	LineRunes int
	// MinDuration is the shortest a cue should stay on screen (5/6 s, 20 frames at 24 fps).
	MinDuration time.Duration
	// MaxDuration is the longest a cue may stay on screen.
	MaxDuration time.Duration
	// MaxCPS is the most characters a second a viewer is asked to read.
	MaxCPS float64
	// MinGap is the least time between the end of a cue and the start of the next (two
	// frames at 24 fps), so the eye sees a change.
	MinGap time.Duration
	// Joiners are the words, in lower case, that belong with the words after them
	// (conjunctions, prepositions, articles): a line may break before them, never after.
	Joiners []string
	// Titles are the abbreviations that belong with the name after them ("dr.").
	Titles []string
	// Particles, for Japanese, are the characters after which a line breaks well when a
	// new word (kanji or katakana) follows.
	Particles string
}

// The common limits of every language.
const (
	subtitleLines = 2
	minCue        = 834 * time.Millisecond // 5/6 s (20 frames at 24 fps), up to the whole millisecond printed
	maxCue        = 7 * time.Second
	minGap        = 83 * time.Millisecond // 2 frames at 24 fps
)

// defaultRules hold for every language without rules of its own: the limits of Latin
// scripts (Arabic, Hebrew, Greek, Hindi… alike).
var defaultRules = Rules{Lines: subtitleLines, LineRunes: 42, MinDuration: minCue, MaxDuration: maxCue, MaxCPS: 17, MinGap: minGap}

// languageRules is the one table of subtitle rules, by ISO-639-1 code. Characters per
// line and per second after Netflix's timed-text style guides (English: 42 and 17 as for
// children's programmes, the stricter of its two; Russian 39; Chinese 16 and 9; Japanese
// 13 and 4, which verbatim speech exceeds: best effort; Korean 16 and 12).
var languageRules = map[string]Rules{
	"en": withWords(defaultRules, "en",
		"and but or nor so yet because although though while when where which who whom whose that if unless until since after before to of in on at for with from into onto about by as than the a an my your his her its our their this these those",
		"mr. mrs. ms. dr. prof. st. mt. no. jr. sr. mx. rev. gen. col. capt. lt. sgt."),
	"es": withWords(defaultRules, "es",
		"y e o u ni pero sino que porque aunque cuando donde si de del en con por para a al sin sobre entre hasta desde el la los las un una unos unas mi tu su",
		"sr. sra. srta. dr. dra. d. dña. prof. no. núm."),
	"fr": withWords(defaultRules, "fr",
		"et ou mais donc car ni que qui quand si de du des en dans avec pour par sur sous sans chez le la les un une au aux mon ton son",
		"m. mme. mlle. dr. pr. st. ste."),
	"de": withWords(defaultRules, "de",
		"und oder aber denn sondern dass weil wenn als ob in an auf aus bei mit nach von vor zu zum zur für über unter durch der die das den dem des ein eine einen einem einer",
		"hr. fr. dr. prof. st. nr."),
	"it": withWords(defaultRules, "it",
		"e o ma che perché se quando dove di del della in con per su da tra fra il lo la i gli le un uno una",
		"sig. sig.ra dott. dr. prof. s."),
	"pt": withWords(defaultRules, "pt",
		"e ou mas que porque se quando onde de do da dos das em no na com por para sem sobre o a os as um uma",
		"sr. sra. dr. dra. prof. d."),
	"ru": withWords(Rules{Lines: subtitleLines, LineRunes: 39, MinDuration: minCue, MaxDuration: maxCue, MaxCPS: 17, MinGap: minGap}, "ru",
		"и а но или либо что чтобы потому поэтому когда если где который которая которое которые как в во на с со по к ко для от из о об обо до за под над при без через у не ни",
		"г. гг. им. св. т. ул. д. проф. др."),
	"uk": withWords(defaultRules, "uk",
		"і й та а але або що щоб коли якщо де який яка яке які як в у на з із зі по до для від за під над при без через не ні",
		"м. вул. проф. св."),
	"ar": withWords(defaultRules, "ar",
		"و أو لكن ثم بل في من على إلى عن مع أن إن التي الذي الذين لأن حتى بعد قبل عند لم لن لا ما",
		"د. أ. م."),
	"zh": {Language: "zh", Lines: subtitleLines, LineRunes: 16, MinDuration: minCue, MaxDuration: maxCue, MaxCPS: 9, MinGap: minGap},
	"ja": {Language: "ja", Lines: subtitleLines, LineRunes: 13, MinDuration: minCue, MaxDuration: maxCue, MaxCPS: 4, MinGap: minGap,
		Particles: "はがをにでとものへや"},
	"ko": {Language: "ko", Lines: subtitleLines, LineRunes: 16, MinDuration: minCue, MaxDuration: maxCue, MaxCPS: 12, MinGap: minGap},
}

// withWords returns base for language code with its joiners and titles (space-separated).
func withWords(base Rules, code, joiners, titles string) Rules {
	base.Language = code
	base.Joiners = strings.Fields(joiners)
	base.Titles = strings.Fields(titles)
	return base
}

// lookupRules returns the subtitle rules of a language named by code ("ja", "zh-Hans",
// "pt_BR") or by name ("japanese"), or the default rules, and whether the language was known.
func lookupRules(language string) (Rules, bool) {
	if r, ok := languageRules[LanguageCode(language)]; ok {
		return r, true
	}
	return defaultRules, false
}

// rulesForText returns the rules of language, or when it names no language with rules of
// its own, those of the script the text is mostly written in (kana: Japanese, Han:
// Chinese, Hangul: Korean), else the default.
func rulesForText(language, text string) Rules {
	if r, ok := lookupRules(language); ok {
		return r
	}
	var kana, han, hangul, other int
	for _, r := range text {
		switch {
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			kana++
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case unicode.IsLetter(r):
			other++
		}
	}
	switch {
	case kana+han+hangul <= other:
		return defaultRules
	case kana > 0 && kana+han >= hangul:
		return languageRules["ja"]
	case han >= hangul:
		return languageRules["zh"]
	default:
		return languageRules["ko"]
	}
}
