package transcript

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"parla/media"
	"parla/providers"
)

// speech is what a long test transcript in one language is made of: sentences (with
// names, numbers, clauses) and how fast they are spoken, in characters a second.
type speech struct {
	lang      string // as an engine names it
	rate      float64
	sentences []string
}

var speeches = []speech{
	{"english", 15, []string{
		"Good evening, and welcome to the programme.",
		"Tonight we look at how the city of Bristol rebuilt its harbour after the war.",
		"Dr. Smith, who led the survey, counted 3 500 ships in a single year.",
		"That is more than twice the number recorded in 1938, and nobody expected it.",
		"The council met on Tuesday and voted to keep the old cranes where they stand.",
		"Mrs. Patel said the decision was right, but she wanted more money for the schools.",
		"If the weather holds, the festival will open on the 14th of June at noon.",
		"We asked people on the quay what they thought of the plans for the new bridge across the river and the road that would follow it.",
		"Yes.",
		"Some of them were angry, because the work had already taken four years and cost 12 million pounds.",
		"Others were simply glad that the boats were back.",
	}},
	{"spanish", 15, []string{
		"Buenas noches y bienvenidos al programa.",
		"Hoy hablamos con la Dra. García sobre el agua en Andalucía.",
		"Según su estudio, el consumo subió un 15 % en solo 3 años.",
		"Los agricultores de Almería dicen que no pueden esperar más, porque los pozos se secan.",
		"El ayuntamiento aprobó el plan el martes, pero la oposición votó en contra.",
		"Si llueve en otoño, los embalses recuperarán parte de lo perdido durante el verano más caluroso de la década.",
		"Sí.",
		"Mañana seguiremos con la segunda parte de la entrevista con Juan Pérez, que vive en Sevilla desde 1990.",
	}},
	{"russian", 14, []string{
		"Добрый вечер, и добро пожаловать в нашу программу.",
		"Сегодня мы поговорим о том, как в Новосибирске строят новый мост через Обь.",
		"По словам инженера Ивана Петрова, на стройке работают 3 500 человек.",
		"Работы начались в 2019 году и должны закончиться к осени следующего года.",
		"Жители левого берега ждут мост давно, потому что пробки в часы пик стали невыносимыми.",
		"Да.",
		"Мэр города сказал, что денег хватит, но депутаты попросили проверить смету ещё раз до конца месяца.",
		"В следующем выпуске мы расскажем о школах и больницах района.",
	}},
	{"chinese", 5, []string{
		"大家晚上好，欢迎收看今天的节目。",
		"今天我们来谈一谈北京的新地铁线路。",
		"据王先生介绍，这条线路每天可以运送三百五十万名乘客。",
		"工程从二零一九年开始，预计明年秋天完工。",
		"很多市民说，早高峰的时候地铁太挤了，希望新线路能够缓解压力。",
		"是的。",
		"下一期节目我们将继续关注城市交通和环境保护的问题，敬请期待。",
	}},
	{"japanese", 7, []string{
		"皆さん、こんばんは。今日の番組へようこそ。",
		"今日は東京の新しい地下鉄について話します。",
		"田中さんによると、この路線は一日に三百五十万人を運ぶことができます。",
		"工事は二〇一九年に始まり、来年の秋に完成する予定です。",
		"朝のラッシュ時には電車がとても混雑しているので、新しい路線に期待する人が多いです。",
		"はい。",
		"次回は、町の交通と環境の問題について引き続きお伝えします。",
	}},
	{"arabic", 13, []string{
		"مساء الخير، ومرحبا بكم في برنامجنا.",
		"نتحدث اليوم عن المياه في مدينة عمان مع الدكتور أحمد حسن.",
		"بحسب دراسته، ارتفع الاستهلاك بنسبة 15 في المئة خلال 3 سنوات فقط.",
		"يقول المزارعون في وادي الأردن إنهم لا يستطيعون الانتظار أكثر، لأن الآبار تجف.",
		"نعم.",
		"وافق المجلس البلدي على الخطة يوم الثلاثاء، لكن المعارضة صوتت ضدها بعد نقاش طويل حول التكاليف والمواعيد.",
		"سنواصل غدا الجزء الثاني من المقابلة.",
	}},
}

// longTranscript makes about minutes of speech in one language: segments of one to three
// sentences, spoken at the language's rate give or take a fifth, separated by pauses of
// 0 to 2 s; with words, every word (or, in scripts without spaces, every one to three
// characters, like whisper's tokens) timed, with a short pause after each clause. Same
// seed, same transcript.
func longTranscript(sp speech, minutes int, words bool, seed uint64) providers.Transcript {
	rng := rand.New(rand.NewPCG(seed, 13))
	tr := providers.Transcript{Language: sp.lang}
	at := time.Duration(0)
	for at < time.Duration(minutes)*time.Minute {
		n := 1 + rng.IntN(3)
		var parts []string
		for range n {
			parts = append(parts, sp.sentences[rng.IntN(len(sp.sentences))])
		}
		sep := " "
		if unspaced([]rune(parts[0])[0]) {
			sep = ""
		}
		text := strings.Join(parts, sep)
		if len(tr.Segments) > 0 && text == tr.Segments[len(tr.Segments)-1].Text {
			continue // the hallucination rule drops a segment said three times in a row
		}
		rate := sp.rate * (0.8 + 0.4*rng.Float64())
		seg := providers.Segment{Start: at, Text: text}
		if words {
			seg.Words = speak(text, rate, at, rng)
			seg.End = seg.Words[len(seg.Words)-1].End + 200*time.Millisecond
		} else {
			seg.End = at + time.Duration(float64(utf8.RuneCountInString(text))/rate*float64(time.Second))
		}
		tr.Segments = append(tr.Segments, seg)
		at = seg.End + time.Duration(rng.Float64()*2*float64(time.Second))
	}
	tr.Duration = at
	return tr
}

// speak times the words of text from start at rate characters a second.
func speak(text string, rate float64, start time.Duration, rng *rand.Rand) []providers.Word {
	var tokens []string
	for i, f := range strings.Fields(text) {
		rs := []rune(f)
		if !unspaced(rs[0]) {
			tokens = append(tokens, " "+f)
			continue
		}
		for len(rs) > 0 {
			k := min(len(rs), 1+rng.IntN(3))
			tokens = append(tokens, string(rs[:k]))
			rs = rs[k:]
		}
		_ = i
	}
	at := start
	var out []providers.Word
	for _, tok := range tokens {
		d := time.Duration(float64(utf8.RuneCountInString(strings.TrimSpace(tok))) / rate * float64(time.Second))
		w := providers.Word{Start: at.Truncate(time.Millisecond), End: (at + d).Truncate(time.Millisecond), Text: tok}
		out = append(out, w)
		at += d
		if last, _ := utf8.DecodeLastRuneInString(tok); media.EndsSentence(last) || strings.ContainsRune(clauseEnds, last) {
			at += time.Duration(100+rng.IntN(400)) * time.Millisecond
		}
	}
	return out
}

// conformance is what one long transcript's cues measure against its rules.
type conformance struct {
	cues, lines    int
	hard           []string // violations of the hard rules
	short, fast    int      // cues under MinDuration, above MaxCPS
	avoidable      []string // soft violations the retiming could have avoided
	joinerEnds     int      // lines or cues ending with a joiner or a title
	splitNumbers   int      // breaks inside a number
	maxCPS, sumCPS float64
}

// measure checks every cue of cs (laid out from tr, in order) against r.
func measure(cs []cue, r Rules, audio time.Duration) conformance {
	var m conformance
	m.cues = len(cs)
	for i, c := range cs {
		m.lines += len(c.lines)
		d := c.end - c.start
		fail := func(format string, args ...any) {
			m.hard = append(m.hard, fmt.Sprintf("cue %d (%v–%v %q): ", i+1, c.start, c.end, c.lines)+fmt.Sprintf(format, args...))
		}
		if len(c.lines) > r.Lines {
			fail("%d lines", len(c.lines))
		}
		for _, l := range c.lines {
			if n := utf8.RuneCountInString(l); n > r.LineRunes && len(units(l)) > 1 {
				fail("line of %d characters", n)
			}
		}
		if d <= 0 || d > r.MaxDuration {
			fail("lasts %v", d)
		}
		if i > 0 && c.start-cs[i-1].end < r.MinGap {
			fail("%v after the previous cue", c.start-cs[i-1].end)
		}
		chars := 0
		for _, l := range c.lines {
			chars += utf8.RuneCountInString(l)
		}
		cps := float64(chars) / d.Seconds()
		m.maxCPS = max(m.maxCPS, cps)
		m.sumCPS += cps
		// A soft rule may give way only where the cue cannot grow: the next cue (less the
		// gap), the longest cue, or the end of the audio is in the way.
		blocked := d >= r.MaxDuration || (i+1 < len(cs) && c.end >= cs[i+1].start-r.MinGap) || (i+1 == len(cs) && c.end >= audio)
		if d < r.MinDuration {
			m.short++
			if !blocked {
				m.avoidable = append(m.avoidable, fmt.Sprintf("cue %d lasts %v and could be longer", i+1, d))
			}
		}
		if cps > r.MaxCPS+0.01 {
			m.fast++
			if !blocked {
				m.avoidable = append(m.avoidable, fmt.Sprintf("cue %d reads at %.1f characters a second and could be longer", i+1, cps))
			}
		}
		for k, l := range c.lines {
			fields := strings.Fields(l)
			if len(fields) == 0 {
				continue
			}
			last := strings.ToLower(fields[len(fields)-1])
			if slices.Contains(r.Joiners, last) || slices.Contains(r.Titles, last) {
				m.joinerEnds++
			}
			var next string
			if k+1 < len(c.lines) {
				next = c.lines[k+1]
			} else if i+1 < len(cs) {
				next = cs[i+1].lines[0]
			}
			if nf := strings.Fields(next); len(nf) > 0 && isNumber(fields[len(fields)-1]) && isNumber(nf[0]) && !strings.ContainsAny(fields[len(fields)-1], ".,") {
				m.splitNumbers++
			}
			if lr, fr := lastRune(l), firstRune(next); numeral(lr) && numeral(fr) && unspaced(fr) {
				m.splitNumbers++
			}
		}
	}
	return m
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// TestSubtitleConformance lays out an hour of speech in each of six languages, with and
// without word times, and measures every cue against the language's rules. It fails on any
// violation of a hard rule (lines, characters a line, gap, longest cue), on a soft rule
// (shortest cue, characters a second) broken where the cue could have been extended, on a
// line ending with a joiner or title, and on a number cut in two; it reports how often the
// soft rules give way because the speech leaves no room (run with -v for the report).
func TestSubtitleConformance(t *testing.T) {
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-9s %-6s %5s %6s %5s %8s %8s %8s %8s %7s\n", "language", "words", "cues", "lines", "hard", "short%", "fast%", "meanCPS", "maxCPS", "joiner")
	for _, sp := range speeches {
		for _, words := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/words=%v", sp.lang, words), func(t *testing.T) {
				tr := longTranscript(sp, 60, words, uint64(len(sp.lang)))
				r := RulesFor(sp.lang)
				if r.Language == "" {
					t.Fatalf("no rules for %s", sp.lang)
				}
				out, err := Render(tr, "vtt")
				if err != nil {
					t.Fatal(err)
				}
				cs := parseSubtitles(t, string(out), "vtt")
				m := measure(cs, r, tr.Duration.Truncate(time.Millisecond))
				for _, v := range m.hard {
					t.Error(v)
				}
				for _, v := range m.avoidable {
					t.Error(v)
				}
				// Joiners: rare where a long sentence leaves no other break (best effort);
				// numbers: never cut.
				if m.joinerEnds*200 > m.lines || m.splitNumbers > 0 {
					t.Errorf("%d of %d lines end with a joiner or title (at most 0.5%% allowed), %d numbers cut", m.joinerEnds, m.lines, m.splitNumbers)
				}
				checkWords(t, tr, cs, "")
				fmt.Fprintf(&report, "%-9s %-6v %5d %6d %5d %7.1f%% %7.1f%% %8.1f %8.1f %7d\n", sp.lang, words, m.cues, m.lines, len(m.hard),
					100*float64(m.short)/float64(m.cues), 100*float64(m.fast)/float64(m.cues), m.sumCPS/float64(m.cues), m.maxCPS, m.joinerEnds)
			})
		}
	}
	t.Log(report.String())
}

// The report's numbers are only meaningful if the measure catches what it should.
func TestMeasureCatchesViolations(t *testing.T) {
	r := RulesFor("en")
	cs := []cue{
		{start: 0, end: sec(8), lines: []string{"One", "two", "three"}},
		{start: sec(8), end: sec(8.5), lines: []string{strings.Repeat("word ", 10) + "and", "Dr."}},
		{start: sec(20), end: sec(20.2), lines: []string{"It costs 3"}},
		{start: sec(21), end: sec(22), lines: []string{"500 euros."}},
	}
	m := measure(cs, r, sec(30))
	if len(m.hard) != 4 { // 3 lines, 8 s, line of 53, no gap
		t.Errorf("hard violations %q", m.hard)
	}
	// Cues 2 and 3 are short and fast with room after them; cue 2 ends its lines with
	// "and" and "Dr."; cue 3 ends with "3" and cue 4 starts with "500".
	if m.short != 2 || m.fast != 2 || len(m.avoidable) != 4 || m.joinerEnds != 2 || m.splitNumbers != 1 {
		t.Errorf("measure %+v", m)
	}
}
