package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// A JSON body sent as text/plain (or as a form) is what any other site's page may make a
// visitor's browser send without asking first (a "simple" cross-site request): every JSON
// endpoint refuses it with 415 before reading it.
func TestJSONEndpointsRefuseOtherContentTypes(t *testing.T) {
	// No order book: a body that got past the type would fail (500), not pass.
	app := New(Config{}, Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	body := `{"text":"Hello there.","voice":"nova","format":"mp3","locale":"en","video":"https://example.com/v.mp4","sessionId":"cs_1","order":{}}`
	for _, path := range []string{"/api/tts/preview", "/api/tts/quote", "/services/vtt/analyzevideo",
		"/payment/tts/create-checkout-session", "/payment/sst/create-checkout-session",
		"/payment/vtt/create-checkout-session", "/services/tts", "/services/sst"} {
		for _, ctype := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
			"multipart/form-data; boundary=x", "", "application/jsonp", "text/json"} {
			req := httptest.NewRequest("POST", path, strings.NewReader(body))
			if ctype != "" {
				req.Header.Set("Content-Type", ctype)
			}
			resp, err := app.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			var got struct {
				OK    *bool `json:"ok"`
				Error struct{ Code, Message string }
			}
			if json.Unmarshal(raw, &got) != nil || resp.StatusCode != 415 || got.OK == nil || *got.OK ||
				got.Error.Code != "unsupported_media_type" || got.Error.Message == "" {
				t.Errorf("POST %s as %q: %d %s, want 415 unsupported_media_type", path, ctype, resp.StatusCode, raw)
			}
		}
	}
}

// decodeJSON takes application/json with or without parameters, and its refusals name no
// Go type, struct or package: the visitor reads a plain sentence and a code.
func TestDecodeJSONSpeaksNoGo(t *testing.T) {
	app := fiber.New()
	decode := func(ctype, body string) error {
		fctx := &fasthttp.RequestCtx{}
		fctx.Request.Header.SetContentType(ctype)
		fctx.Request.SetBodyString(body)
		c := app.AcquireCtx(fctx)
		defer app.ReleaseCtx(c)
		var v ttsCheckoutBody
		return decodeJSON(c, &v)
	}
	for _, ctype := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON"} {
		if err := decode(ctype, `{"order":{"voice":"nova"}}`); err != nil {
			t.Errorf("%q refused: %v", ctype, err)
		}
	}
	for _, body := range []string{`{"order":{"speed":"fast"}}`, `{"order":"x"}`, `{"products":[{"quantity":"1"}]}`,
		`{"order":{"input":1}}`, `[1,2]`, `{"order":`, `{"order":{}}}`, `nul`, "\x00", `{"order":{"speed":1e999}}`} {
		err := decode("application/json", body)
		e := classify(err)
		if err == nil || e.kind.code != "invalid_json" || e.kind.status != 400 {
			t.Errorf("%q: %v, want invalid_json", body, err)
			continue
		}
		for _, internal := range []string{"Go ", "struct", "json:", "ttsCheckoutBody", "lineItem", "float64", "int64",
			"string into", "unmarshal", "api.", "main."} {
			if strings.Contains(e.message, internal) {
				t.Errorf("%q: the message %q tells %q", body, e.message, internal)
			}
		}
	}
}

// A compressed body is refused before anything reads it: Fiber's Ctx.Body inflates
// whatever Content-Encoding names, without a limit (300 KB of gzip made 1.5 GB), and
// BodyLimit counts only the bytes sent.
func TestCompressedBodiesRefused(t *testing.T) {
	app := New(Config{}, Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zero := make([]byte, 1<<20)
	for range 200 { // 200 MB of zeros, about 200 KB compressed
		zw.Write(zero)
	}
	zw.Close()
	for _, enc := range []string{"gzip", "gzip, gzip", "deflate", "br", "GZIP"} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		req := httptest.NewRequest("POST", "/api/tts/preview", bytes.NewReader(bomb.Bytes()))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Content-Encoding", enc)
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 415 || !strings.Contains(string(raw), "unsupported_media_type") {
			t.Errorf("Content-Encoding %q: %d %s, want 415 unsupported_media_type", enc, resp.StatusCode, raw)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Errorf("Content-Encoding %q: %d MB allocated for a %d KB body", enc, grew>>20, bomb.Len()>>10)
		}
	}
}
