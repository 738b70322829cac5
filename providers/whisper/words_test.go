package whisper

import (
	"reflect"
	"testing"
	"time"

	"parla/providers"
)

func TestWords(t *testing.T) {
	ms := time.Millisecond
	tok := func(text string, start, end int) token {
		return token{Text: text, Start: time.Duration(start) * ms, End: time.Duration(end) * ms}
	}
	special := token{Text: "[_BEG_]", Special: true}
	w := func(start, end time.Duration, text string) providers.Word {
		return providers.Word{Start: start, End: end, Text: text}
	}
	tests := []struct {
		name       string
		tokens     []token
		start, end time.Duration
		want       []providers.Word
	}{
		{"English", []token{special, tok(" Hello", 0, 300), tok(" wor", 300, 500), tok("ld", 500, 700), tok(".", 700, 750), {Text: "[_TT_35]"}},
			0, time.Second, []providers.Word{w(0, 300*ms, " Hello"), w(300*ms, 750*ms, " world.")}},
		{"first token without a space", []token{tok("Hi", 100, 200), tok(",", 200, 210), tok(" you", 300, 400)},
			0, time.Second, []providers.Word{w(100*ms, 210*ms, "Hi,"), w(300*ms, 400*ms, " you")}},
		{"control tokens by name", []token{tok("<|endoftext|>", 0, 0), tok("[_SOT_]", 0, 0), tok(" ok", 10, 20), tok("[_TT_150]", 0, 3000)},
			0, time.Second, []providers.Word{w(10*ms, 20*ms, " ok")}},
		{"Japanese: a word per token, punctuation joins", []token{tok("こんにちは", 0, 400), tok("。", 400, 450), tok("元", 500, 600), tok("気", 600, 700)},
			0, time.Second, []providers.Word{w(0, 450*ms, "こんにちは。"), w(500*ms, 600*ms, "元"), w(600*ms, 700*ms, "気")}},
		{"a character split across tokens", []token{tok("\xe5\x85", 0, 100), tok("\x83", 100, 200), tok("気", 200, 300)},
			0, time.Second, []providers.Word{w(0, 200*ms, "元"), w(200*ms, 300*ms, "気")}},
		{"times kept in the segment and in order", []token{tok(" a", 500, 900), tok(" b", 200, 300), tok(" c", 2000, 3000)},
			time.Second, 2500 * ms, []providers.Word{w(time.Second, time.Second, " a"), w(time.Second, time.Second, " b"), w(2*time.Second, 2500*ms, " c")}},
		{"only control tokens", []token{special, {Text: "[_TT_0]"}}, 0, time.Second, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := words(tt.tokens, tt.start, tt.end)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("words =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}
