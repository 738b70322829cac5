package espeak

import (
	"strings"
	"unicode"

	"github.com/mozillazg/go-pinyin"
)

// espeak-ng 1.51's cmn voice looks characters up in a dictionary that gives pinyin with
// tone digits, then reads many of those syllables with English rules ("你好" comes out as
// "nee three, hay-oh three"). Its cmn-latn-pinyin voice reads the same pinyin properly,
// so Chinese is converted to numbered pinyin here (github.com/mozillazg/go-pinyin's
// dictionary, pure Go) and read by that voice. TestSpeakLanguages holds the phonemes free
// of English; TestCmnVoiceSwitchesToEnglish shows why the conversion is needed.

// fullWidth are Chinese punctuation marks and the ASCII ones espeak-ng pauses at.
var fullWidth = strings.NewReplacer("，", ", ", "。", ". ", "！", "! ", "？", "? ", "；", "; ",
	"：", ": ", "、", ", ", "（", " (", "）", ") ", "“", " \"", "”", "\" ", "《", " ", "》", " ")

// toPinyin writes the Han characters of text as pinyin syllables with tone numbers
// ("今天" → "jin1 tian1"), leaving everything else as it is.
func toPinyin(text string) string {
	args := pinyin.NewArgs()
	args.Style = pinyin.Tone3
	var b strings.Builder
	var run []rune
	flush := func() {
		if len(run) == 0 {
			return
		}
		b.WriteByte(' ')
		b.WriteString(strings.Join(pinyin.LazyPinyin(string(run), args), " "))
		b.WriteByte(' ')
		run = run[:0]
	}
	for _, r := range text {
		if unicode.Is(unicode.Han, r) {
			run = append(run, r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return fullWidth.Replace(b.String())
}
