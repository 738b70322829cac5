package testkit

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// SampleSentence is a few seconds of English the tests speak.
const SampleSentence = "Hello from Parla. This short clip checks that uploaded speech is measured, priced and transcribed."

// Speech writes text spoken by espeak-ng to dir/name, encoded by ffmpeg in the format its
// extension names (mp3, wav, m4a, ogg for opus, webm, flac, mp4 for a video with a still
// picture), and returns the path.
func Speech(t testing.TB, dir, name, text string) string {
	t.Helper()
	wav := filepath.Join(dir, name+".src.wav")
	Run(t, Binary(t, "espeak-ng"), "-w", wav, text)
	defer os.Remove(wav)
	out := filepath.Join(dir, name)
	Run(t, Binary(t, "ffmpeg"), append(append([]string{"-nostdin", "-loglevel", "error", "-y"},
		encodeFor(filepath.Ext(name), wav)...), out)...)
	return out
}

func encodeFor(ext, wav string) []string {
	switch ext {
	case ".ogg", ".opus":
		return []string{"-i", wav, "-c:a", "libopus"}
	case ".webm":
		return []string{"-i", wav, "-c:a", "libopus", "-f", "webm"}
	case ".mp4", ".mkv":
		return []string{"-f", "lavfi", "-i", "color=c=navy:s=160x120:r=5", "-i", wav,
			"-shortest", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"}
	}
	return []string{"-i", wav}
}

// Run runs a program and fails the test with its output when it fails.
func Run(t testing.TB, program string, args ...string) {
	t.Helper()
	cmd := exec.Command(program, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(program), strings.Join(args, " "), err, out.String())
	}
}

// ClaimFrames rewrites the frame count in the Xing/Info header of the mp3 at path so that
// its header claims frames frames (at 1152 samples a frame) whatever it holds: a file
// whose header lies about its length.
func ClaimFrames(t testing.TB, path string, frames uint32) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := data[:min(len(data), 4096)]
	i := bytes.Index(head, []byte("Xing"))
	if i < 0 {
		i = bytes.Index(head, []byte("Info"))
	}
	if i < 0 || i+12 > len(data) || binary.BigEndian.Uint32(data[i+4:])&1 == 0 {
		t.Fatalf("%s has no Xing header with a frame count", path)
	}
	binary.BigEndian.PutUint32(data[i+8:], frames)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
