// Command kokoro-standin answers as Kokoro-FastAPI's OpenAI-compatible API does, for the
// deploy checks (.ci/deploy.sh, phase voices), where its image cannot be pulled. It speaks
// with espeak-ng in the language of the Kokoro voice asked for (the voice name's first
// letter: ef_dora is Spanish) and encodes with ffmpeg, so that an order through it is real
// audio in the right language; it is not Kokoro's voice.
//
//	GET  /health             {"status":"healthy"}
//	GET  /v1/models          the models it accepts: kokoro, tts-1, tts-1-hd
//	POST /v1/audio/speech    {model, input, voice, response_format, speed}: the audio,
//	                         streamed in chunks; the voice asked for is logged and answered
//	                         in X-Standin-Voice
//
// Refusals have Kokoro-FastAPI's shapes: 400 {"detail":{"error","message","type"}} for an
// unknown model or voice, 422 {"detail":[{…,"msg"}]} for a request that does not validate.
// It has its own go.mod, so that the app's module neither builds nor vets it.
package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// openAIVoices are the names Kokoro-FastAPI maps to its English voices.
var openAIVoices = map[string]bool{"alloy": true, "ash": true, "coral": true, "echo": true, "fable": true,
	"onyx": true, "nova": true, "sage": true, "shimmer": true}

// kokoroVoice is a Kokoro voice name: language letter, gender letter, name (af_nova).
var kokoroVoice = regexp.MustCompile(`^([abefhijpz])([fm])_[a-z]+$`)

// languages are espeak-ng's voices for Kokoro's language letters.
var languages = map[string]string{"a": "en-us", "b": "en-gb", "e": "es", "f": "fr-fr", "h": "hi",
	"i": "it", "j": "ja", "p": "pt-br", "z": "cmn"}

// encodings are ffmpeg's output arguments for each response_format Kokoro-FastAPI serves.
var encodings = map[string][]string{
	"mp3":  {"-c:a", "libmp3lame", "-b:a", "64k", "-f", "mp3"},
	"opus": {"-c:a", "libopus", "-f", "ogg"},
	"aac":  {"-c:a", "aac", "-f", "adts"},
	"flac": {"-c:a", "flac", "-f", "flac"},
	"wav":  {"-c:a", "pcm_s16le", "-f", "wav"},
	"pcm":  {"-c:a", "pcm_s16le", "-f", "s16le"},
}

type speechRequest struct {
	Model          string   `json:"model"`
	Input          string   `json:"input"`
	Voice          string   `json:"voice"`
	ResponseFormat string   `json:"response_format"`
	Speed          *float64 `json:"speed"`
}

func main() {
	addr := ":" + cmp.Or(os.Getenv("PORT"), "8880")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "healthy"})
	})
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		var data []map[string]any
		for _, id := range []string{"tts-1", "tts-1-hd", "kokoro"} {
			data = append(data, map[string]any{"id": id, "object": "model", "created": 1686935002, "owned_by": "kokoro"})
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
	})
	mux.HandleFunc("POST /v1/audio/speech", speech)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"detail": "Not Found"})
	})
	log.Printf("kokoro-standin: listening on %s", addr)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

func speech(w http.ResponseWriter, r *http.Request) {
	var req speechRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		invalid(w, "body", "JSON decode error: "+err.Error())
		return
	}
	lang, status, code, msg := check(&req)
	if status != 0 {
		log.Printf("kokoro-standin: refused %d %s: %s", status, code, msg)
		if status == http.StatusUnprocessableEntity {
			invalid(w, code, msg)
			return
		}
		writeJSON(w, status, map[string]any{"detail": map[string]string{"error": code, "message": msg, "type": "invalid_request_error"}})
		return
	}
	audio, seconds, err := speak(r.Context(), req, lang)
	if err != nil {
		log.Printf("kokoro-standin: processing_error: %v", err)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"detail": map[string]string{
			"error": "processing_error", "message": err.Error(), "type": "server_error"}})
		return
	}
	log.Printf("kokoro-standin: speech voice=%s language=%s model=%s format=%s speed=%g characters=%d seconds=%.2f bytes=%d",
		req.Voice, lang, req.Model, req.ResponseFormat, *req.Speed, len([]rune(req.Input)), seconds, len(audio))
	w.Header().Set("Content-Type", contentType(req.ResponseFormat))
	w.Header().Set("X-Standin-Voice", req.Voice)
	w.Header().Set("X-Standin-Language", lang)
	for i := 0; i < len(audio); i += 4096 { // streamed, as Kokoro-FastAPI answers by default
		w.Write(audio[i:min(i+4096, len(audio))])
		w.(http.Flusher).Flush()
	}
}

// check fills the defaults and validates a request as Kokoro-FastAPI does, returning the
// espeak-ng voice to speak it with, or a refusal's status, code and message.
func check(req *speechRequest) (lang string, status int, code, msg string) {
	if req.ResponseFormat == "" {
		req.ResponseFormat = "mp3"
	}
	if req.Speed == nil {
		one := 1.0
		req.Speed = &one
	}
	switch {
	case req.Model != "kokoro" && req.Model != "tts-1" && req.Model != "tts-1-hd":
		return "", http.StatusBadRequest, "invalid_model", "Unsupported model: " + req.Model
	case encodings[req.ResponseFormat] == nil:
		return "", http.StatusUnprocessableEntity, "response_format", "Input should be 'mp3', 'opus', 'aac', 'flac', 'wav' or 'pcm'"
	case *req.Speed < 0.25 || *req.Speed > 4:
		return "", http.StatusUnprocessableEntity, "speed", "Input should be between 0.25 and 4.0"
	case strings.TrimSpace(req.Input) == "":
		return "", http.StatusBadRequest, "validation_error", "Text is empty after preprocessing"
	}
	if openAIVoices[req.Voice] {
		return languages["a"], 0, "", ""
	}
	m := kokoroVoice.FindStringSubmatch(req.Voice)
	if m == nil {
		return "", http.StatusBadRequest, "validation_error",
			fmt.Sprintf("Voice '%s' not found. Available voices: af_alloy, af_nova, ef_dora, em_alex, …", req.Voice)
	}
	return languages[m[1]], 0, "", ""
}

// speak runs espeak-ng (a female variant for a female voice) and encodes its WAV at
// Kokoro's 24 kHz, mono; it returns the audio and its length in seconds.
func speak(ctx context.Context, req speechRequest, lang string) ([]byte, float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	voice := lang
	if m := kokoroVoice.FindStringSubmatch(req.Voice); m != nil && m[2] == "f" {
		voice += "+f3"
	}
	wav, err := run(ctx, nil, "espeak-ng", "-v", voice, "-s", strconv.Itoa(int(175**req.Speed)), "--stdout", "--", req.Input)
	if err != nil {
		return nil, 0, err
	}
	// espeak-ng writes 16-bit mono at 22,050 Hz after a 44-byte header.
	seconds := float64(max(len(wav)-44, 0)) / (2 * 22050)
	args := append([]string{"-nostdin", "-v", "error", "-i", "pipe:0", "-ar", "24000", "-ac", "1"}, encodings[req.ResponseFormat]...)
	audio, err := run(ctx, wav, "ffmpeg", append(args, "pipe:1")...)
	return audio, seconds, err
}

func run(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = bytes.NewReader(stdin), &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func contentType(format string) string {
	return map[string]string{"mp3": "audio/mpeg", "opus": "audio/opus", "aac": "audio/aac", "flac": "audio/flac",
		"wav": "audio/wav", "pcm": "audio/pcm"}[format]
}

// invalid answers as FastAPI's request validation does: 422 with a list of errors.
func invalid(w http.ResponseWriter, field, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{
		{"type": "value_error", "loc": []string{"body", field}, "msg": msg}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
