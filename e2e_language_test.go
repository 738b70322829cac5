package main

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// TestSpeechLanguageOverHTTP: the page learns the engine's languages and, before paying,
// the language a text will be spoken in; the order carries it to the engine and stores it;
// a text in a language or script the engine lacks is refused and nothing is stored.
func TestSpeechLanguageOverHTTP(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, nil)

	cfg := h.get("/api/config").json(t)
	var langs []string
	for _, l := range cfg["tts"].(map[string]any)["languages"].([]any) {
		langs = append(langs, l.(string))
	}
	for _, want := range []string{"en", "ja", "es", "ru", "zh", "ar", "fr", "de", "hi", "ko"} {
		if !slices.Contains(langs, want) {
			t.Errorf("tts.languages lacks %q: %v", want, langs)
		}
	}
	if slices.Contains(langs, "bo") || slices.Contains(langs, "km") || len(langs) < 100 {
		t.Errorf("tts.languages is not espeak-ng's list: %v", langs)
	}

	spanish := "Esta mañana hacía frío, así que nos quedamos en casa leyendo libros. Por la tarde salió el sol."
	tibetan := "བོད་ཀྱི་སྐད་ཡིག་ནི་བོད་ཀྱི་མི་རིགས་ཀྱི་སྐད་ཡིག་ཡིན།"
	quotes := []struct {
		name           string
		body           map[string]any
		status         int
		language, code string
		detected       bool
	}{
		{"spanish detected", map[string]any{"text": spanish, "locale": "en"}, 200, "es", "", true},
		{"chosen", map[string]any{"text": spanish, "language": "pt-BR", "locale": "en"}, 200, "pt", "", false},
		{"cannot tell: interface language", map[string]any{"text": "yyyyyyyy", "locale": "es"}, 200, "es", "", true},
		{"kanji for a Japanese visitor", map[string]any{"text": "東京都", "locale": "jp"}, 200, "ja", "", true},
		{"tibetan", map[string]any{"text": tibetan, "locale": "en"}, 400, "", "language_unsupported", false},
		{"unknown chosen", map[string]any{"text": spanish, "language": "xx"}, 400, "", "language_unsupported", false},
		{"empty", map[string]any{"text": " "}, 400, "", "empty_text", false},
	}
	for _, q := range quotes {
		t.Run("quote "+q.name, func(t *testing.T) {
			r := h.postJSON("/api/tts/quote", q.body)
			m := r.json(t)
			if r.status != q.status {
				t.Fatalf("got %d %s, want %d", r.status, r.body, q.status)
			}
			if q.code != "" {
				if m["error"].(map[string]any)["code"] != q.code {
					t.Errorf("got %s, want %s", r.body, q.code)
				}
				return
			}
			if m["language"] != q.language || m["detected"] != q.detected || m["amount"] != 99.0 {
				t.Errorf("got %s, want %s (detected %v)", r.body, q.language, q.detected)
			}
		})
	}

	// Refused at checkout, before anything is stored or charged.
	for _, bad := range []map[string]any{
		ttsOrder(tibetan, "alloy", "mp3", 1, "a@example.com", "en"),
		func() map[string]any {
			o := ttsOrder(spanish, "alloy", "mp3", 1, "a@example.com", "en")
			o["order"].(map[string]any)["language"] = "tlh"
			return o
		}(),
	} {
		r := h.postJSON("/payment/tts/create-checkout-session", bad)
		if r.status != 400 || r.json(t)["error"].(map[string]any)["code"] != "language_unsupported" {
			t.Errorf("got %d %s, want 400 language_unsupported", r.status, r.body)
		}
	}
	var n int
	h.app.db.QueryRow(`SELECT COUNT(*) FROM orders`).Scan(&n)
	if n != 0 {
		t.Fatalf("refused orders left %d rows", n)
	}

	// A Spanish text is spoken in Spanish: the answer says so, the order stores it.
	r := h.postJSON("/payment/tts/create-checkout-session", ttsOrder(spanish, "nova", "mp3", 1, "a@example.com", "en"))
	h.wantStatus(r, 200)
	answer := r.json(t)
	if answer["language"] != "es" {
		t.Errorf("checkout answer %s, want language es", r.body)
	}
	var raw string
	h.app.db.QueryRow(`SELECT params FROM orders WHERE session_id = ?`, answer["sessionId"]).Scan(&raw)
	var params struct {
		Language string `json:"language"`
		Mixed    bool   `json:"mixed"`
	}
	if err := json.Unmarshal([]byte(raw), &params); err != nil || params.Language != "es" || params.Mixed {
		t.Errorf("stored parameters %s", raw)
	}
	h.wantStatus(h.do("POST", answer["url"].(string)+"/pay", "", nil, nil), 303)
	link := h.waitForLink(answer["sessionId"].(string), 30*time.Second)
	codec, secs := probe(t, h.get(link).body)
	if codec != "mp3" || secs < 4 || secs > 15 {
		t.Errorf("result is %s of %.1fs", codec, secs)
	}

	// Paragraphs in two languages: each read in its own, the order says so.
	english := "The weather was cold this morning, so we stayed at home and read books all day long."
	r = h.postJSON("/payment/tts/create-checkout-session", ttsOrder(english+"\n\n"+spanish, "echo", "mp3", 1, "a@example.com", "en"))
	h.wantStatus(r, 200)
	answer = r.json(t)
	h.app.db.QueryRow(`SELECT params FROM orders WHERE session_id = ?`, answer["sessionId"]).Scan(&raw)
	params.Language, params.Mixed = "", false
	if err := json.Unmarshal([]byte(raw), &params); err != nil || !params.Mixed || answer["language"] != params.Language {
		t.Errorf("mixed order: answer %s, stored %s", r.body, raw)
	}
	h.wantStatus(h.do("POST", answer["url"].(string)+"/pay", "", nil, nil), 303)
	link = h.waitForLink(answer["sessionId"].(string), 30*time.Second)
	if codec, secs := probe(t, h.get(link).body); codec != "mp3" || secs < 8 || secs > 30 {
		t.Errorf("mixed result is %s of %.1fs", codec, secs)
	}
}
