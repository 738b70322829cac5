package espeak

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"parla/media"
	"parla/providers"
	"parla/providers/speechlang"
	"parla/providers/texts"
)

// languageVoices maps each language espeak-ng 1.51 speaks (its code as
// speechlang.Normalize gives it) to the espeak-ng voice that reads it. It is espeak-ng's own
// list (`espeak-ng --voices`), one voice per language, named by its language or its file;
// TestLanguageVoicesMatchEspeak holds the two equal. Where espeak-ng has several voices for a language the choice is noted.
var languageVoices = map[string]string{
	"af": "af", "am": "am", "an": "an", "ar": "ar", "as": "as", "az": "az", "ba": "ba",
	"be": "be", "bg": "bg", "bn": "bn", "bpy": "bpy", "bs": "bs", "ca": "ca",
	"chr": "chr-US-Qaaa-x-west", "cs": "cs", "cv": "cv", "cy": "cy", "da": "da", "de": "de",
	"el": "el",
	"en": "en-us", // of en-us, en-gb, en-029, …: the product's English voices were en-us
	"eo": "eo", "es": "es", "et": "et", "eu": "eu", "fa": "fa", "fi": "fi",
	"fr": "fr", // fr-fr by its file name: "fr-fr+m3" ignores the variant
	"ga": "ga", "gd": "gd", "gn": "gn", "grc": "grc", "gu": "gu", "hak": "hak", "haw": "haw",
	"he": "he", "hi": "hi", "hr": "hr", "ht": "ht", "hu": "hu", "hy": "hy", "hyw": "hyw",
	"ia": "ia", "id": "id", "io": "io", "is": "is", "it": "it", "ja": "ja", "jbo": "jbo",
	"ka": "ka", "kk": "kk", "kl": "kl", "kn": "kn", "ko": "ko", "kok": "kok", "ku": "ku",
	"ky": "ky", "la": "la", "lb": "lb", "lfn": "lfn", "lt": "lt", "ltg": "ltg", "lv": "lv",
	"mi": "mi", "mk": "mk", "ml": "ml", "mr": "mr", "ms": "ms", "mt": "mt", "my": "my",
	"nb": "nb", "nci": "nci", "ne": "ne", "nl": "nl", "nog": "nog", "om": "om", "or": "or",
	"pa": "pa", "pap": "pap", "piqd": "piqd", "pl": "pl",
	"pt": "pt-br", // of pt (Portugal) and pt-br: most speakers are Brazilian
	"py": "py", "qdb": "qdb", "qu": "qu", "quc": "quc", "qya": "qya", "ro": "ro",
	"ru": "ru", // of ru and ru-lv
	"sd": "sd", "shn": "shn", "si": "si", "sjn": "sjn", "sk": "sk", "sl": "sl", "smj": "smj",
	"sq": "sq", "sr": "sr", "sv": "sv", "sw": "sw", "ta": "ta", "te": "te", "th": "th",
	"tk": "tk", "tn": "tn", "tr": "tr", "tt": "tt", "ug": "ug", "uk": "uk", "ur": "ur",
	"uz":  "uz",
	"vi":  "vi",              // of vi (northern), vi-vn-x-central, vi-vn-x-south
	"yue": "yue",             // Cantonese
	"zh":  "cmn-latn-pinyin", // Mandarin, from pinyin (pinyin.go): the cmn voice misreads characters
}

// Languages returns the codes of the languages the engine speaks, sorted.
func Languages() []string {
	langs := make([]string, 0, len(languageVoices))
	for l := range languageVoices {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	return langs
}

// character is the variant each product voice puts on a language's voice, so that a voice
// keeps its character (male or female, lower or higher) in every language.
var character = map[string]string{
	"alloy":   "",    // the language's own voice
	"echo":    "+m3", // male
	"fable":   "+m1", // male
	"onyx":    "+m7", // male, deep
	"nova":    "+f3", // female
	"shimmer": "+f4", // female
}

// englishVoices are the product voices in English, as they have always sounded: two of
// them British.
var englishVoices = map[string]string{
	"alloy":   "en-us",
	"echo":    "en-us+m3",
	"fable":   "en-gb-x-rp+m1",
	"onyx":    "en-us+m7",
	"nova":    "en-us+f3",
	"shimmer": "en-gb+f4",
}

// errLanguage is wrapped when a request names a language the engine does not speak.
var errLanguage = errors.New("language not spoken by espeak-ng")

// Voice returns the espeak-ng voice (language voice plus variant, the -v argument) for a
// product voice speaking a language ("" = English).
func Voice(voice, lang string) (string, error) {
	variant, ok := character[voice]
	if !ok {
		return "", fmt.Errorf("espeak: unknown voice %q", voice)
	}
	lang = texts.LanguageCode(speechlang.Normalize(lang), false)
	if lang == "" || lang == "en" {
		return englishVoices[voice], nil
	}
	base, ok := languageVoices[lang]
	if !ok {
		return "", fmt.Errorf("espeak: %w: %q", errLanguage, lang)
	}
	return base + variant, nil
}

// chunk is one piece of text for one espeak-ng process, with the voice that reads it.
type chunk struct {
	Text  string
	Voice string // espeak-ng's -v argument, e.g. es+m3
}

// detector knows espeak-ng's languages; it holds no mutable state.
var detector = speechlang.New(Languages())

// plan cuts a request's text into the chunks espeak-ng speaks, in order: by language
// first, then on sentence boundaries into even pieces of about size characters
// (media.SplitEven: as many as a piece of size needs, so a piece may pass size by up to
// half a piece's length, never more).
//
// req.Language is the language the order book settled on. With req.DetectParagraphs the
// text's paragraphs are detected again (the same detector gives the same answer), each
// spoken in its own language, and those that cannot be told in req.Language; without it
// the whole text is spoken in req.Language. Japanese is converted to kana (kana.go) first,
// as espeak-ng's ja voice reads no kanji, and Chinese to pinyin (pinyin.go).
func plan(req providers.SpeechRequest, size int) ([]chunk, error) {
	lang := texts.LanguageCode(speechlang.Normalize(req.Language), false)
	spans, err := detector.Spans(req.Text, lang, req.DetectParagraphs)
	if err != nil {
		return nil, fmt.Errorf("espeak: %w", err)
	}
	var chunks []chunk
	for _, s := range spans {
		v, err := Voice(req.Voice, s.Language)
		if err != nil {
			return nil, err
		}
		text := s.Text
		switch s.Language {
		case "ja":
			if text, err = toKana(text); err != nil {
				return nil, fmt.Errorf("espeak: %w", err)
			}
		case "zh":
			text = toPinyin(text)
		}
		for _, t := range media.SplitEven(text, ceilDiv(utf8.RuneCountInString(text), max(size, 1))) {
			if strings.TrimSpace(t) != "" {
				chunks = append(chunks, chunk{Text: t, Voice: v})
			}
		}
	}
	if len(chunks) == 0 {
		return nil, errors.New("espeak: empty text")
	}
	return chunks, nil
}

// The engine's optional capabilities (providers.go).
var (
	_ providers.LanguageLister = (*Speaker)(nil)
	_ providers.Labeler        = (*Speaker)(nil)
)

// Languages returns the codes of the languages the engine speaks, sorted (see Languages).
func (s *Speaker) Languages() []string { return Languages() }

// Label is the engine's name as visitors read it.
func (s *Speaker) Label() string { return "eSpeak NG" }
