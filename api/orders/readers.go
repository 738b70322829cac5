package orders

import (
	"slices"

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

// SpeechReaders says which engine reads each language the engines speak (/api/config);
// nil with a single engine, which reads them all.
func (d *Desk) SpeechReaders() []Reader {
	if d.engineFor == nil || d.languages == nil {
		return nil
	}
	return readersOf(d.languages.Languages(), d.engineFor())
}

// SpeechEngine names the engine that reads lang now, as visitors read it; "" with a single
// engine.
func (d *Desk) SpeechEngine(lang string) string {
	if d.engineFor == nil {
		return ""
	}
	return d.engineFor()(lang)
}

// spanReaders says which engine reads each language of a text's spans; nil with a single
// engine.
func (d *Desk) spanReaders(spans []speechlang.Span) []Reader {
	if d.engineFor == nil {
		return nil
	}
	langs := make([]string, len(spans))
	for i, s := range spans {
		langs[i] = s.Language
	}
	return readersOf(langs, d.engineFor())
}

// engineNames are the names of readers' engines, in order.
func engineNames(readers []Reader) []string {
	names := make([]string, len(readers))
	for i, r := range readers {
		names[i] = r.Engine
	}
	return names
}
