package media

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"parla/providers/testkit"
)

// hostileUploads are files a visitor could upload to make ffmpeg read something else: each
// names the secret audio file (or carries audio in a URL) instead of being audio itself.
// Had any call followed one, it would have found the secret's speech and succeeded.
func hostileUploads(t *testing.T, dir, secret string) map[string]string {
	t.Helper()
	wav, err := os.ReadFile(secret)
	if err != nil {
		t.Fatal(err)
	}
	playlist := func(entry string) string {
		return "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\n" + entry + "\n#EXT-X-ENDLIST\n"
	}
	name := filepath.Base(secret)
	files := map[string]string{
		"HLS playlist naming a local file":  playlist(secret),
		"HLS playlist naming a nearby file": playlist(name),
		"HLS playlist with a file: URL":     playlist("file:" + secret),
		"HLS playlist with subfile:":        playlist("subfile,,start,0,end,0,,:" + secret),
		"HLS playlist with a data: URL":     playlist("data:audio/mpeg;base64," + base64.StdEncoding.EncodeToString(wav)),
		"ffconcat script, nearby file":      fmt.Sprintf("ffconcat version 1.0\nfile '%s'\n", name),
		"ffconcat script, absolute path":    fmt.Sprintf("ffconcat version 1.0\nfile '%s'\n", secret),
	}
	paths := map[string]string{}
	i := 0
	for name, content := range files {
		i++
		// Uploads are kept under random names without extension, as the server keeps them.
		p := filepath.Join(dir, fmt.Sprintf("upload-%d", i))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	// An image sequence pattern: the upload itself is a PNG named like a pattern. Made in
	// Go, so that an ffmpeg without image encoders (the image's) can be tested too.
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{R: 255, A: 255}}, image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "img001.png"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	paths["image2 pattern"] = filepath.Join(dir, "img%03d.png")
	return paths
}

func TestVisitorFilesNeverOpenOtherFiles(t *testing.T) {
	r := newRunner(t)
	dir := t.TempDir()
	// An MP3 named .mp3: ffmpeg's HLS reader checks that a segment's extension matches its
	// content, so this is what a visitor would aim at (another visitor's result, say).
	secret := testkit.Speech(t, dir, "secret.mp3", testkit.SampleSentence)
	checkRefusesHostileUploads(t, r, dir, secret)
}

// checkRefusesHostileUploads runs every call a visitor's upload goes through on each of
// hostileUploads (made in dir, naming the MP3 secret) and wants them all refused.
func checkRefusesHostileUploads(t *testing.T, r *Runner, dir, secret string) {
	ctx := context.Background()
	for name, path := range hostileUploads(t, dir, secret) {
		t.Run(name, func(t *testing.T) {
			if m, err := r.CheckUpload(ctx, path, 0); err == nil {
				t.Errorf("CheckUpload accepted it as %v of audio", m.Length)
			}
			if samples, err := r.DecodePCM(ctx, path, 0, 0); err == nil || len(samples) > 0 {
				t.Errorf("DecodePCM decoded %d samples (err %v)", len(samples), err)
			}
			out := filepath.Join(t.TempDir(), "re.mp3")
			if err := r.FFmpeg(ctx, ReencodeArgs(path, out, SpeechBitrate, 0), nil, nil); err == nil {
				t.Error("ReencodeArgs re-encoded it")
			}
		})
	}
	// The same calls on the secret itself work: the refusals above are the whitelists' doing.
	// (Without -format_whitelist the nearby-file playlist and concat script are read: the
	// test was seen to fail that way.)
	if _, err := r.CheckUpload(ctx, secret, 0); err != nil {
		t.Fatalf("the secret itself: %v", err)
	}
}
