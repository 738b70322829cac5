package transcript

import "strings"

// languageNames maps whisper's language codes to the names OpenAI's verbose_json reports
// (whisper's own table), so a transcript says "english" whichever engine made it.
var languageNames = map[string]string{
	"en": "english", "zh": "chinese", "de": "german", "es": "spanish", "ru": "russian",
	"ko": "korean", "fr": "french", "ja": "japanese", "pt": "portuguese", "tr": "turkish",
	"pl": "polish", "ca": "catalan", "nl": "dutch", "ar": "arabic", "sv": "swedish",
	"it": "italian", "id": "indonesian", "hi": "hindi", "fi": "finnish", "vi": "vietnamese",
	"he": "hebrew", "uk": "ukrainian", "el": "greek", "ms": "malay", "cs": "czech",
	"ro": "romanian", "da": "danish", "hu": "hungarian", "ta": "tamil", "no": "norwegian",
	"th": "thai", "ur": "urdu", "hr": "croatian", "bg": "bulgarian", "lt": "lithuanian",
	"la": "latin", "mi": "maori", "ml": "malayalam", "cy": "welsh", "sk": "slovak",
	"te": "telugu", "fa": "persian", "lv": "latvian", "bn": "bengali", "sr": "serbian",
	"az": "azerbaijani", "sl": "slovenian", "kn": "kannada", "et": "estonian", "mk": "macedonian",
	"br": "breton", "eu": "basque", "is": "icelandic", "hy": "armenian", "ne": "nepali",
	"mn": "mongolian", "bs": "bosnian", "kk": "kazakh", "sq": "albanian", "sw": "swahili",
	"gl": "galician", "mr": "marathi", "pa": "punjabi", "si": "sinhala", "km": "khmer",
	"sn": "shona", "yo": "yoruba", "so": "somali", "af": "afrikaans", "oc": "occitan",
	"ka": "georgian", "be": "belarusian", "tg": "tajik", "sd": "sindhi", "gu": "gujarati",
	"am": "amharic", "yi": "yiddish", "lo": "lao", "uz": "uzbek", "fo": "faroese",
	"ht": "haitian creole", "ps": "pashto", "tk": "turkmen", "nn": "nynorsk", "mt": "maltese",
	"sa": "sanskrit", "lb": "luxembourgish", "my": "myanmar", "bo": "tibetan", "tl": "tagalog",
	"mg": "malagasy", "as": "assamese", "tt": "tatar", "haw": "hawaiian", "ln": "lingala",
	"ha": "hausa", "ba": "bashkir", "jw": "javanese", "su": "sundanese", "yue": "cantonese",
}

// languageAliases are names engines give a language besides languageNames'.
var languageAliases = map[string]string{"castilian": "es", "mandarin": "zh"}

// languageCodes is languageNames the other way round: a name to its code.
var languageCodes = func() map[string]string {
	m := make(map[string]string, len(languageNames)+len(languageAliases))
	for code, name := range languageNames {
		m[name] = code
	}
	for name, code := range languageAliases {
		m[name] = code
	}
	return m
}()

// LanguageName returns the name of a whisper language code ("en": "english"), or the code
// itself when it has none (an unknown code, or already a name).
func LanguageName(code string) string {
	if name, ok := languageNames[code]; ok {
		return name
	}
	return code
}

// LanguageCode returns the code of a language named by its name ("english", as OpenAI's
// verbose_json and whisper's transcripts say) or by its code ("en", "pt_BR": "pt"), lower
// case; "" when it names no language in whisper's table.
func LanguageCode(language string) string {
	l := strings.ToLower(strings.TrimSpace(language))
	if code, ok := languageCodes[l]; ok {
		return code
	}
	if i := strings.IndexAny(l, "-_"); i > 0 {
		l = l[:i]
	}
	if _, ok := languageNames[l]; ok {
		return l
	}
	return ""
}
