package orders

import (
	"errors"
	"slices"
	"strings"

	"parla/providers"
	"parla/providers/speechlang"
)

// Reader is one engine, as visitors read its name, and the languages it reads.
type Reader struct {
	Engine    string   `json:"engine"`
	Languages []string `json:"languages"`
}

// readersOf groups langs (each once, in their order) by the engine that reads each
// (engineFor), the engines in the order first met; a language no engine reads is left out.
func readersOf(langs []string, engineFor func(lang string) string) []Reader {
	var out []Reader
	seen := map[string]bool{}
	for _, l := range langs {
		e := engineFor(l)
		if e == "" || seen[l] {
			continue
		}
		seen[l] = true
		i := slices.IndexFunc(out, func(r Reader) bool { return r.Engine == e })
		if i < 0 {
			out = append(out, Reader{Engine: e})
			i = len(out) - 1
		}
		out[i].Languages = append(out[i].Languages, l)
	}
	return out
}

// Readers are the speech engines' languages: which they speak, in which a text is, and,
// with several engines, which reads which (as the engines' router chooses: EngineFor).
type Readers struct {
	// languages detects and checks a text's languages; nil when the engine names none.
	languages *speechlang.Detector
	// engineFor names the engine of each language, each engine's state read once; nil
	// with a single engine.
	engineFor func() func(lang string) string
}

// Languages lists the codes of the languages the speech engine speaks, sorted; nil when
// it names none.
func (r *Readers) Languages() []string {
	if r.languages == nil {
		return nil
	}
	return r.languages.Languages()
}

// All says which engine reads each language the engines speak (/api/config); nil with a
// single engine, which reads them all.
func (r *Readers) All() []Reader {
	if r.engineFor == nil || r.languages == nil {
		return nil
	}
	return readersOf(r.languages.Languages(), r.engineFor())
}

// engines names the engines that read a speech's languages (a preview's); nil with a
// single engine. The engines' router detects the same spans; a text it cannot read fails
// there.
func (r *Readers) engines(speech providers.SpeechRequest) []string {
	if r.engineFor == nil || r.languages == nil {
		return nil
	}
	spans, err := r.languages.Spans(speech.Text, speech.Language, speech.DetectParagraphs)
	if err != nil {
		return nil
	}
	return engineNames(r.ofSpans(spans))
}

// Engine names the engine that reads lang now, as visitors read it; "" with a single
// engine.
func (r *Readers) Engine(lang string) string {
	if r.engineFor == nil {
		return ""
	}
	return r.engineFor()(lang)
}

// ofSpans says which engine reads each language of a text's spans; nil with a single
// engine.
func (r *Readers) ofSpans(spans []speechlang.Span) []Reader {
	if r.engineFor == nil {
		return nil
	}
	langs := make([]string, len(spans))
	for i, s := range spans {
		langs[i] = s.Language
	}
	return readersOf(langs, r.engineFor())
}

// engineNames are the names of readers' engines, in order.
func engineNames(readers []Reader) []string {
	names := make([]string, len(readers))
	for i, r := range readers {
		names[i] = r.Engine
	}
	return names
}

// settle settles the language of a text to speak.
func (r *Readers) settle(text, chosen, locale string) (speechlang.Result, error) {
	if r.languages == nil {
		if strings.TrimSpace(chosen) != "" {
			return speechlang.Result{}, bad("language_unsupported", "this engine speaks its own default language only")
		}
		return speechlang.Result{}, nil
	}
	var res speechlang.Result
	var err error
	if strings.TrimSpace(chosen) != "" {
		res, err = r.languages.Choose(text, languageTag(chosen))
	} else {
		res, err = r.languages.Detect(text, languageTag(locale))
	}
	var ue *speechlang.UnsupportedError
	if errors.As(err, &ue) {
		if ue.Script != "" {
			return res, bad("language_unsupported", "the text is mostly in the %s script, which none of the voices reads", ue.Script)
		}
		return res, bad("language_unsupported", "the voices do not speak %q; the languages they speak are listed in /api/config (tts.languages)", ue.Language)
	}
	return res, err
}
