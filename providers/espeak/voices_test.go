package espeak

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"parla/providers"
	"parla/providers/speechlang"
	"parla/providers/testkit"
)

// espeakVoices parses `espeak-ng --voices`: the language column of every voice, and the
// names -v also accepts (the language and the file's base name, lower case).
func espeakVoices(t *testing.T) (langs, names []string) {
	t.Helper()
	testkit.Binary(t, "espeak-ng")
	out, err := exec.Command("espeak-ng", "--voices").Output()
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 5 {
			continue
		}
		langs = append(langs, f[1])
		names = append(names, strings.ToLower(f[1]), strings.ToLower(filepath.Base(f[4])))
	}
	if len(langs) < 100 {
		t.Fatalf("espeak-ng lists %d voices", len(langs))
	}
	return langs, names
}

// The table is espeak-ng's own list: every language it has a voice for is offered, and
// every voice the table names exists.
func TestLanguageVoicesMatchEspeak(t *testing.T) {
	langs, names := espeakVoices(t)
	for lang, v := range languageVoices {
		if !slices.Contains(names, strings.ToLower(v)) {
			t.Errorf("%s: espeak-ng has no voice %q", lang, v)
		}
	}
	for _, v := range langs {
		if lang := speechlang.Normalize(v); languageVoices[lang] == "" {
			t.Errorf("espeak-ng voice %q (%s) is not offered", v, lang)
		}
	}
}

// Every product voice in every language: the language's own espeak-ng voice with the
// voice's variant, six different sounds.
func TestVoice(t *testing.T) {
	tests := []struct{ lang, voice, want string }{
		{"en", "alloy", "en-us"}, {"", "fable", "en-gb-x-rp+m1"}, {"en-GB", "shimmer", "en-gb+f4"},
		{"es", "alloy", "es"}, {"es", "echo", "es+m3"}, {"es", "fable", "es+m1"},
		{"es", "onyx", "es+m7"}, {"es", "nova", "es+f3"}, {"es", "shimmer", "es+f4"},
		{"ja", "nova", "ja+f3"}, {"jp", "echo", "ja+m3"}, {"zh", "nova", "cmn-latn-pinyin+f3"},
		{"zh-Hans", "onyx", "cmn-latn-pinyin+m7"}, {"ar", "fable", "ar+m1"}, {"ru", "shimmer", "ru+f4"},
		{"pt-BR", "alloy", "pt-br"}, {"fr", "echo", "fr+m3"}, {"de", "nova", "de+f3"},
		{"it", "onyx", "it+m7"}, {"nl", "shimmer", "nl+f4"}, {"pl", "fable", "pl+m1"},
		{"uk", "echo", "uk+m3"}, {"tr", "nova", "tr+f3"}, {"el", "alloy", "el"},
		{"he", "onyx", "he+m7"}, {"fa", "nova", "fa+f3"}, {"hi", "echo", "hi+m3"},
		{"ko", "shimmer", "ko+f4"}, {"vi", "fable", "vi+m1"}, {"id", "alloy", "id"},
		{"sv", "nova", "sv+f3"}, {"fi", "echo", "fi+m3"}, {"cs", "onyx", "cs+m7"},
	}
	for _, tt := range tests {
		t.Run(tt.lang+"/"+tt.voice, func(t *testing.T) {
			got, err := Voice(tt.voice, tt.lang)
			if err != nil || got != tt.want {
				t.Errorf("Voice(%q, %q) = %q, %v; want %q", tt.voice, tt.lang, got, err, tt.want)
			}
		})
	}
	for _, bad := range [][2]string{{"ash", "en"}, {"alloy", "xx"}, {"alloy", "bo"}} {
		if v, err := Voice(bad[0], bad[1]); err == nil {
			t.Errorf("Voice(%q, %q) = %q, want an error", bad[0], bad[1], v)
		}
	}
}

// Each voice keeps its character in every language: six distinct sounds in each of 20
// languages, from espeak-ng itself.
func TestVoicesDifferInEveryLanguage(t *testing.T) {
	testkit.Binary(t, "espeak-ng")
	langs := []string{"en", "es", "fr", "de", "it", "pt", "nl", "ru", "uk", "pl", "cs", "sv",
		"tr", "el", "ar", "he", "hi", "ja", "zh", "ko", "vi"}
	for _, lang := range langs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			seen := map[[32]byte]string{}
			for _, voice := range providers.Voices {
				v, err := Voice(voice, lang)
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command("espeak-ng", "--stdout", "-v", v)
				cmd.Stdin = strings.NewReader("123 שלום")
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v", v, err)
				}
				sum := sha256.Sum256(out)
				if other, dup := seen[sum]; dup {
					t.Errorf("%s sounds exactly like %s", voice, other)
				}
				seen[sum] = voice
			}
		})
	}
}

func TestPlan(t *testing.T) {
	testkit.Binary(t, "kakasi")
	es := "Esta mañana hacía frío, así que nos quedamos en casa leyendo libros. Por la tarde salió el sol y dimos un largo paseo junto al río."
	en := "The weather was cold this morning, so we stayed at home and read books. In the afternoon the sun came out and we went for a long walk along the river."
	ja := "今朝は寒かったので、家で本を読んでいました。午後になると日が出てきたので、川に沿って長い散歩をしました。"
	type want struct{ voice, text string }
	tests := []struct {
		name string
		req  providers.SpeechRequest
		max  int
		want []want
	}{
		{"one language", providers.SpeechRequest{Voice: "echo", Language: "es", Text: es}, 1500,
			[]want{{"es+m3", es}}},
		{"chosen language reads everything", providers.SpeechRequest{Voice: "echo", Language: "es", Text: en + "\n" + es}, 1500,
			[]want{{"es+m3", en + "\n" + es}}},
		{"empty language is English", providers.SpeechRequest{Voice: "fable", Text: en}, 1500,
			[]want{{"en-gb-x-rp+m1", en}}},
		{"split on sentences", providers.SpeechRequest{Voice: "nova", Language: "es", Text: es}, 80,
			[]want{{"es+f3", es[:strings.Index(es, "libros.")+7]}, {"es+f3", es[strings.Index(es, "Por"):]}}},
		{"paragraphs in their languages", providers.SpeechRequest{Voice: "onyx", Language: "en", DetectParagraphs: true,
			Text: en + "\n\n" + es + "\n" + en}, 1500,
			[]want{{"en-us+m7", en}, {"es+m7", es}, {"en-us+m7", en}}},
		{"japanese in kana", providers.SpeechRequest{Voice: "nova", Language: "ja", Text: ja}, 1500,
			[]want{{"ja+f3", "けさはさむかったので、いえでほんをよんでいました。ごごになるとにちがでてきたので、かわにそってながいさんぽをしました。"}}},
		{"chinese in pinyin", providers.SpeechRequest{Voice: "alloy", Language: "zh-CN", Text: "今天早上很冷。"}, 1500,
			[]want{{"cmn-latn-pinyin", "jin1 tian1 zao3 shang4 hen3 leng3 ."}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks, err := plan(tt.req, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, c := range chunks {
				got = append(got, want{c.Voice, strings.TrimSpace(c.Text)})
				if n := utf8.RuneCountInString(c.Text); n > tt.max*3/2 {
					t.Errorf("chunk of %d characters, more than half a chunk past %d", n, tt.max)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	for _, req := range []providers.SpeechRequest{
		{Voice: "alloy", Language: "xx", Text: "hello"},
		{Voice: "alloy", Language: "en", DetectParagraphs: true, Text: "བོད་ཀྱི་སྐད་ཡིག་ནི་བོད་ཀྱི"},
		{Voice: "alloy", Language: "en", Text: " \n "},
	} {
		if c, err := plan(req, 1500); err == nil {
			t.Errorf("plan(%+v) = %v, want an error", req, c)
		}
	}
}

func TestToKana(t *testing.T) {
	testkit.Binary(t, "kakasi")
	tests := []struct{ in, want string }{
		{"日本語の文章を読みます。", "にほんごのぶんしょうをよみます。"},
		{"カタカナとひらがな", "カタカナとひらがな"}, // no kanji: kakasi is not run
		{"東京 2024 ABC", "とうきょう 2024 ABC"},
	}
	for _, tt := range tests {
		got, err := toKana(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("toKana(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if !slices.Equal(kakasiArgs(), []string{"-i", "utf8", "-o", "utf8", "-JH"}) {
		t.Errorf("kakasi arguments %v", kakasiArgs())
	}
}

// languageCases are the texts of the end-to-end test, one per language the issue names;
// the Japanese one has kanji.
var languageCases = []struct{ lang, voice, text string }{
	{"en", "alloy", "The weather was cold this morning, so we stayed at home and read books."},
	{"es", "echo", "Esta mañana hacía frío, así que nos quedamos en casa leyendo libros."},
	{"ru", "nova", "Сегодня утром было холодно, поэтому мы остались дома и читали книги."},
	{"ar", "onyx", "كان الجو باردا هذا الصباح، لذلك بقينا في البيت وقرأنا الكتب."},
	{"zh", "shimmer", "今天早上很冷，所以我们待在家里看书。"},
	{"ja", "fable", "今朝は寒かったので、家で本を読んでいました。"},
}

// phonemes returns espeak-ng's phoneme transcription of text read by voice. espeak-ng
// marks a switch to another language's rules as "(en)", "(ja)".
func phonemes(t *testing.T, voice, text string) string {
	t.Helper()
	cmd := exec.Command("espeak-ng", "-q", "-x", "-v", voice)
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("espeak-ng -x: %v", err)
	}
	return string(out)
}

// TestSpeakLanguages speaks a text in each language through the engine and checks the
// espeak-ng command that ran (through a wrapper that records its arguments), that espeak-ng
// reads the text with that language's rules (no switch to English in its phonemes), and
// that the audio lasts as long as espeak-ng's own rendering of that text.
func TestSpeakLanguages(t *testing.T) {
	espeak := testkit.Binary(t, "espeak-ng")
	testkit.Binary(t, "kakasi")
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "espeak-ng")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$0.args\"\nexec " + espeak + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // one language at a time: the wrapper's log is shared
	s := setup(t, Config{Binary: wrapper})
	for _, c := range languageCases {
		t.Run(c.lang, func(t *testing.T) {
			mu.Lock()
			defer mu.Unlock()
			os.Remove(wrapper + ".args")
			req := providers.SpeechRequest{Voice: c.voice, Text: c.text, Format: "flac", Speed: 1, Language: c.lang}
			_, info := speak(t, s, req)

			voice, _ := Voice(c.voice, c.lang)
			args, err := os.ReadFile(wrapper + ".args")
			if err != nil {
				t.Fatal(err)
			}
			if want := "--stdout -b 1 -v " + voice + " -s 175\n"; string(args) != want {
				t.Errorf("espeak-ng ran with %q, want %q", args, want)
			}
			text := c.text
			switch c.lang {
			case "ja":
				if text, err = toKana(c.text); err != nil {
					t.Fatal(err)
				}
				if hasKanji(text) {
					t.Errorf("kanji left after kakasi: %q", text)
				}
			case "zh":
				text = toPinyin(c.text)
			}
			ph := phonemes(t, voice, text)
			if strings.Contains(ph, "(en)") && c.lang != "en" {
				t.Errorf("espeak-ng switches to English: %s", ph)
			}
			if strings.TrimSpace(ph) == "" {
				t.Error("no phonemes")
			}
			want := espeakDuration(t, text, voice, 175)
			if !near(info.Duration, want, 0.02) {
				t.Errorf("duration %v, want about %v", info.Duration, want)
			}
			// Plausible for the text: between 40 and 350 ms a character at 175 wpm
			// (an ideograph is a syllable, which espeak-ng's Mandarin says in about
			// 300 ms; a letter is a fraction of one).
			perChar := info.Duration / time.Duration(utf8.RuneCountInString(c.text))
			if perChar < 40*time.Millisecond || perChar > 350*time.Millisecond {
				t.Errorf("%v for %d characters (%v each)", info.Duration, utf8.RuneCountInString(c.text), perChar)
			}
			t.Logf("%s: %v, %s", voice, info.Duration.Round(time.Millisecond), strings.TrimSpace(ph))
		})
	}
}

// espeak-ng's cmn voice reads its own dictionary's pinyin with English rules: what
// pinyin.go exists to prevent.
func TestCmnVoiceSwitchesToEnglish(t *testing.T) {
	testkit.Binary(t, "espeak-ng")
	if ph := phonemes(t, "cmn", "你好"); !strings.Contains(ph, "(en)") {
		t.Errorf("espeak-ng's cmn voice reads characters now (%s): pinyin.go may be unnecessary", ph)
	}
}

func TestToPinyin(t *testing.T) {
	tests := []struct{ in, want string }{
		{"你好", " ni3 hao3 "},
		{"今天很冷，我们看书。", " jin1 tian1 hen3 leng3 ,  wo3 men kan4 shu1 . "},
		{"Parla 2024", "Parla 2024"},
	}
	for _, tt := range tests {
		if got := toPinyin(tt.in); got != tt.want {
			t.Errorf("toPinyin(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The Japanese voice given kanji unconverted names each one "Chinese letter" in English:
// what kana.go exists to prevent, so the check above can fail.
func TestKanjiUnconvertedSwitchToEnglish(t *testing.T) {
	testkit.Binary(t, "espeak-ng")
	if ph := phonemes(t, "ja", "今朝"); !strings.Contains(ph, "(en)") {
		t.Errorf("espeak-ng's ja voice reads kanji now (%s): kana.go may be unnecessary", ph)
	}
}
