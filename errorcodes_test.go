package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"parla/providers/testkit"
)

// seenCodes are the error codes the app answered during this test run, over HTTP.
var seenCodes sync.Map

// recordErrorCode notes the stable code of an error answer.
func recordErrorCode(r reply) {
	if r.status < 400 {
		return
	}
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(r.body, &body) == nil && body.Error.Code != "" {
		seenCodes.Store(body.Error.Code, true)
	}
}

// producedElsewhere are the codes whose cause only a vendor unreachable here sends. The
// test named beside each makes that cause against a local server speaking the vendor's
// protocol, and api's TestClassify turns it into the code.
var producedElsewhere = map[string]string{
	"video_unavailable":    "media/links TestYouTubeAnalyze (YouTube refuses a private or removed video)",
	"platform_unreachable": "media/links TestYouTubeAnalyzeUnreachable (YouTube's player API answers 5xx, garbage or nothing)",
	// No engine of an untagged build lacks translation; the whisper test model is English-only.
	"translation_unavailable": "TestWhisperEngineOrderEndToEnd (-tags whisper, make whisper-test: the English-only test model refuses a translate order at checkout) and api/orders TestTranslationRefusedWhenTheEngineCannot",
}

// errorCodeRow is a row of api/README.md's "Error codes" table: | `code` | status | when |.
// The table lists every code of the API's error table, in its order (api's
// TestErrorTableMatchesTheDocs holds the two together).
var errorCodeRow = regexp.MustCompile("^\\| `([a-z_]+)` \\| [0-9]{3} \\|")

// errorCodes are the stable error codes the API can answer, as api/README.md lists them.
func errorCodes() []string {
	doc, err := os.ReadFile("api/README.md")
	if err != nil {
		panic(err)
	}
	_, table, _ := strings.Cut(string(doc), "\n## Error codes\n")
	var codes []string
	for _, line := range strings.Split(table, "\n") {
		if m := errorCodeRow.FindStringSubmatch(line); m != nil {
			codes = append(codes, m[1])
		}
	}
	if len(codes) < 10 {
		panic(fmt.Sprintf("api/README.md lists %d error codes: its table was not read", len(codes)))
	}
	return codes
}

// unproducedErrorCodes are the codes of the API's error table that no test of this run
// produced over HTTP, and that no vendor-only cause excuses (producedElsewhere), sorted.
func unproducedErrorCodes() []string {
	var missing []string
	for _, c := range errorCodes() {
		if _, ok := seenCodes.Load(c); !ok && producedElsewhere[c] == "" {
			missing = append(missing, c)
		}
	}
	slices.Sort(missing)
	return missing
}

// codeOf reads the stable code of an error answer.
func codeOf(r reply) string {
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(r.body, &body)
	return body.Error.Code
}

// TestErrorCodesOverHTTP produces, through the real app, the error codes that the
// journeys of the other tests do not meet, each with the status the table gives it.
func TestErrorCodesOverHTTP(t *testing.T) {
	requireMediaTools(t)
	env := startFakeOpenAI(t).env()
	env["ALLOW_PRIVATE_URLS"] = "1"
	env["VTT_MAX_DURATION"] = "2s"
	h := startApp(t, env)
	dir := t.TempDir()
	videos := startVideoServer(t)
	long := videos.serve("long.mp4", testkit.Speech(t, dir, "long.mp4", "This sentence takes longer than two seconds to say out loud."))
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("these are notes, not a video"), 0o644)
	text := videos.serve("notes.mp4", notes)
	mp3 := mustRead(t, testkit.Speech(t, dir, "live.mp3", "On air."))
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/mpeg")
		w.WriteHeader(200)
		w.Write(mp3) // no Content-Length: a stream of unknown end
		w.(http.Flusher).Flush()
	}))
	t.Cleanup(live.Close)

	paid, _ := h.checkout(ttsOrder("Paid once.", "alloy", "mp3", 1, "p@example.com", "en"))
	h.wantStatus(h.do("POST", "/checkout/test/"+paid+"/pay", "", nil, nil), 303)
	lapsed, _ := h.checkout(ttsOrder("Paid too late.", "alloy", "mp3", 1, "l@example.com", "en"))
	if _, err := h.app.db.Exec(`UPDATE test_checkout_sessions SET expires_at = 1 WHERE id = ?`, lapsed); err != nil {
		t.Fatal(err) // the checkout's 30 minutes are over
	}

	order := ttsOrder("Hello.", "alloy", "mp3", 1, "a@example.com", "en")
	order["products"] = []map[string]any{{"price_data": map[string]any{"currency": "eur"}, "quantity": 1}}
	sttOrder := map[string]any{"order": map[string]any{"filePath": "x", "response_format": "srt", "language": "xx",
		"email": "a@example.com", "emailVerify": "a@example.com"}}
	big := append([]byte(`{"order":{"input":"`), bytes.Repeat([]byte("a"), 2<<20)...)
	big = append(big, `"}}`...)
	analyze := func(link string) func() reply {
		return func() reply { return h.postJSON("/services/vtt/analyzevideo", map[string]string{"video": link}) }
	}
	tests := []struct {
		name   string
		send   func() reply
		status int
		code   string
	}{
		{"JSON body over the limit", func() reply {
			return h.do("POST", "/payment/tts/create-checkout-session", "application/json", big, nil)
		}, 413, "too_large"},
		{"JSON sent as text/plain (a cross-site simple request)", func() reply {
			return h.do("POST", "/api/tts/preview", "text/plain", []byte(`{"text":"Hello.","voice":"nova","format":"mp3"}`), nil)
		}, 415, "unsupported_media_type"},
		{"product without an amount", func() reply { return h.postJSON("/payment/tts/create-checkout-session", order) }, 400, "invalid_products"},
		{"unknown spoken language", func() reply { return h.postJSON("/payment/sst/create-checkout-session", sttOrder) }, 400, "invalid_language"},
		{"video over VTT_MAX_DURATION", analyze(long), 422, "video_too_long"},
		{"link to a text file", analyze(text), 422, "not_media"},
		{"link that answers 404", analyze(videos.URL + "/gone.mp4"), 422, "source_unreachable"},
		{"stream without an end", analyze(live.URL + "/radio.mp3"), 422, "live_stream"},
		{"cancelling a paid checkout", func() reply { return h.do("POST", "/checkout/test/"+paid+"/cancel", "", nil, nil) }, 409, "session_paid"},
		{"paying a lapsed checkout", func() reply { return h.do("POST", "/checkout/test/"+lapsed+"/pay", "", nil, nil) }, 410, "session_expired"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.send()
			if r.status != tt.status || codeOf(r) != tt.code {
				t.Errorf("got %d %s, want %d %s", r.status, r.body, tt.status, tt.code)
			}
		})
	}

	// Scratch space that vanished under the server is its own fault (500), not the
	// visitor's; the server says so without details and keeps serving.
	scratch := filepath.Join(h.cfg.DataDir, "tmp")
	if err := os.RemoveAll(scratch); err != nil {
		t.Fatal(err)
	}
	ctype, body := multipartBody(t, [3]string{"file", "a.mp3", "ID3"})
	r := h.do("POST", "/services/sst/uploadaudio", ctype, body, nil)
	if r.status != 500 || codeOf(r) != "internal" || bytes.Contains(r.body, []byte(scratch)) {
		t.Errorf("upload without scratch space: %d %s", r.status, r.body)
	}
	h.wantStatus(h.get("/healthz"), 200)
}

// After its 10 days a delivered order's link and result answer 410.
func TestExpiredResultsAndOurOwnFaults(t *testing.T) {
	requireMediaTools(t)
	h := startApp(t, nil)
	sessionID, _ := h.checkout(ttsOrder("Ten days later.", "nova", "mp3", 1, "d@example.com", "en"))
	h.wantStatus(h.do("POST", "/checkout/test/"+sessionID+"/pay", "", nil, nil), 303)
	link := h.waitForLink(sessionID, 20*time.Second)
	h.wantStatus(h.get(link), 200)
	// Ten days pass: the link lapses and the sweeper removes the file.
	if _, err := h.app.db.Exec(`UPDATE orders SET link_expires_at = 1 WHERE session_id = ?`, sessionID); err != nil {
		t.Fatal(err)
	}
	if r := h.get(link); r.status != 410 || codeOf(r) != "link_expired" {
		t.Errorf("lapsed link: %d %s", r.status, r.body)
	}
	if rep, err := h.app.book.Sweep(context.Background()); err != nil || rep.Results != 1 {
		t.Fatalf("sweep = %+v, %v", rep, err)
	}
	if r := h.postJSON("/services/tts", map[string]string{"sessionId": sessionID}); r.status != 410 || codeOf(r) != "order_expired" {
		t.Errorf("result of a swept order: %d %s", r.status, r.body)
	}

}

// A JSON body whose chunked encoding breaks off is refused as bad_request, and the
// connection is closed rather than read as the next request.
func TestBrokenChunkedBodyIsABadRequest(t *testing.T) {
	h := startApp(t, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprint(conn, "POST /payment/tts/create-checkout-session HTTP/1.1\r\nHost: parla\r\n"+
		"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"+
		"10\r\n{\"order\":{\"input\"\r\nzz\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{resp.StatusCode, resp.Header, b}
	recordErrorCode(r)
	if r.status != 400 || codeOf(r) != "bad_request" || !resp.Close {
		t.Errorf("got %d %s (close %v), want 400 bad_request and the connection closed", r.status, r.body, resp.Close)
	}
}
