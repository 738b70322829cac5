package speechlang

import (
	"maps"
	"runtime"
	"sync"

	"github.com/abadojack/whatlanggo"
)

// found is one paragraph's detection.
type found struct {
	lang    string
	letters int
	strong  bool
	foreign string // a language the engine lacks that the paragraph is surely in
}

// paragraphs detects every paragraph, on all cores when there are many: detection is
// pure computation, about a tenth of a millisecond a paragraph.
func (d *Detector) paragraphs(paras []string, prior string) []found {
	out := make([]found, len(paras))
	workers := min(runtime.GOMAXPROCS(0), len(paras)/16+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(paras); i += workers {
				out[i] = d.paragraph(paras[i], prior)
			}
		})
	}
	wg.Wait()
	return out
}

// paragraph detects one paragraph: its language, its letter count, whether that
// detection is strong enough to stand on its own, and the language the engine lacks that
// it is surely in, if so. A short paragraph is first judged by its cues, prior (the
// visitor's language) breaking ties.
func (d *Detector) paragraph(p, prior string) found {
	sample, letters := sampleOf(p)
	f := found{letters: letters}
	if letters < strongLetters {
		return f
	}
	if letters < cueLetters {
		if c, ok, _ := d.cued(sample, prior); ok {
			f.lang, f.strong = c, true
			return f
		}
	}
	// Among the engine's languages first: fewer profiles to compare, and the answer for
	// nearly every text. Only an unsure answer is checked against all of whatlanggo's.
	// (Scripts of one language, Khmer say, are named whatever the whitelist.)
	info := whatlanggo.DetectWithOptions(sample, d.options)
	if info.Lang < 0 {
		return f
	}
	// A rarer language needs a longer text, or a sure answer, to be told.
	if letters < cueLetters && !commonLanguages[d.codes[info.Lang]] && info.Confidence < rareConfidence {
		if common := whatlanggo.DetectWithOptions(sample, d.common); common.Lang >= 0 {
			info = common
		}
	}
	c, ok := d.engineCode(d.codes[info.Lang])
	if ok && info.Confidence >= sureConfidence {
		f.lang, f.strong = c, true
		return f
	}
	if !ok && info.IsReliable() {
		f.foreign = d.codes[info.Lang]
		return f
	}
	if all := whatlanggo.Detect(sample); all.Lang >= 0 && all.IsReliable() {
		if _, known := d.engineCode(d.codes[all.Lang]); !known {
			f.foreign = d.codes[all.Lang]
			return f
		}
	}
	f.lang, f.strong = c, ok && info.Confidence >= strongConfidence
	return f
}

// scriptDefaults are the languages a text in a script is spoken in when its language
// cannot be told and neither the visitor's language nor English reads that script.
var scriptDefaults = map[string]string{
	"Latin": "en", "Cyrillic": "ru", "Arabic": "ar", "Han": "zh", "Hiragana": "ja",
	"Katakana": "ja", "Devanagari": "hi", "Greek": "el", "Hebrew": "he", "Bengali": "bn",
	"Armenian": "hy", "Myanmar": "my",
}

// whole detects a text none of whose paragraphs could be told alone: the detected
// language when it is sure enough; else the visitor's, English or the script's usual
// language, the first that reads the text's script; else the detected one anyway.
func (d *Detector) whole(text, fallback string) (string, error) {
	sample, letters := sampleOf(text)
	main := mainScript(sample)
	fallback = Normalize(fallback)
	c, ok, cues := d.cued(sample, fallback)
	if ok {
		return c, nil
	}
	var detected string
	if info := whatlanggo.DetectWithOptions(sample, d.common); info.Lang >= 0 {
		// The trigrams' answer stands when no cue says another language.
		if c, ok := d.engineCode(d.codes[info.Lang]); ok && readsScript(c, main) && marked(c, sample) && !outweighed(cues, d.codes[info.Lang]) {
			detected = c
			if c == "zh" && fallback == "ja" && d.has["ja"] { // kanji alone: a Japanese visitor's
				return "ja", nil
			}
			if info.Confidence >= 1 || info.Confidence >= tellConfidence && letters >= tellLetters {
				return c, nil
			}
		}
	}
	for _, c := range []string{fallback, "en", scriptDefaults[main]} {
		if c, ok := d.engineCode(c); ok && (main == "" || readsScript(c, main)) {
			return c, nil
		}
	}
	if detected != "" {
		return detected, nil
	}
	for _, c := range d.langs {
		if readsScript(c, main) {
			return c, nil
		}
	}
	if len(d.langs) == 0 {
		return "", &UnsupportedError{Language: fallback}
	}
	return d.langs[0], nil
}

// cued judges a short text by its cues (cues.go) and a vote of the trigram statistics
// among the common languages: the language of most evidence among those the engine speaks
// in the text's script, when that evidence is enough and clearly ahead of the next. The
// visitor's language, prior, wins a near tie. When the vote blurs the answer, the cues
// alone may still tell: trigram statistics of a few words are often wrong ("Joyeux
// anniversaire, mon ami !" reads as English to them), a language's own words rarely.
//
// It also returns the cues' scores alone, without the vote and the prior.
func (d *Detector) cued(sample, prior string) (string, bool, map[string]float64) {
	cues := textCues.score(sample)
	scores := maps.Clone(cues)
	if info := whatlanggo.DetectWithOptions(sample, d.common); info.Lang >= 0 && marked(d.codes[info.Lang], sample) {
		scores[d.codes[info.Lang]] += trigramVote
	}
	main := mainScript(sample)
	lang, ok := d.lead(scores, main, sample, prior)
	if !ok {
		if l, cueOK := d.lead(cues, main, sample, prior); cueOK {
			return l, true, cues
		}
	}
	return lang, ok, cues
}

// lead returns the language of most evidence in scores among those the engine speaks in
// the text's script (main) and that the text is not foreign to, and whether that evidence
// is enough and clearly ahead of the next. The visitor's language, prior, wins a near tie.
func (d *Detector) lead(scores map[string]float64, main, sample, prior string) (string, bool) {
	best, second, lang := 0.0, 0.0, ""
	for l, s := range scores {
		c, ok := d.engineCode(l)
		if !ok || !readsScript(c, main) || foreign(l, sample) {
			continue
		}
		if c == prior && s > 0 {
			s += priorWeight
		}
		switch {
		case s > best || s == best && c < lang:
			best, second, lang = s, best, c
		case s > second:
			second = s
		}
	}
	return lang, best >= cueEnough && best-second >= cueMargin
}

// outweighed reports whether some language has more cues than lang.
func outweighed(cues map[string]float64, lang string) bool {
	for l, s := range cues {
		if l != lang && s > cues[lang] {
			return true
		}
	}
	return false
}
