package media

import (
	"slices"
	"strings"
	"testing"
)

func TestEncodeArgs(t *testing.T) {
	tail := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y"}
	tests := []struct {
		name   string
		in     Input
		opts   EncodeOptions
		output string
		want   []string
	}{
		{
			name: "mp3 from wav to stdout", in: WAV, opts: EncodeOptions{Format: MP3}, output: "pipe:1",
			want: []string{"-f", "wav", "-protocol_whitelist", "pipe", "-i", "pipe:0",
				"-f", "mp3", "-b:a", "128k", "-c:a", "libmp3lame", "-compression_level", "5",
				"-map_metadata", "-1", "-protocol_whitelist", "pipe", "pipe:1"},
		},
		{
			name: "opus from 24 kHz pcm", in: PCM(24000, 1), opts: EncodeOptions{Format: Opus, Tempo: 1}, output: "pipe:1",
			want: []string{"-f", "s16le", "-ac", "1", "-ar", "24000", "-protocol_whitelist", "pipe", "-i", "pipe:0",
				"-f", "ogg", "-b:a", "48k", "-ar", "24000", "-c:a", "libopus", "-compression_level", "5",
				"-map_metadata", "-1", "-protocol_whitelist", "pipe", "pipe:1"},
		},
		{
			name: "aac with tempo", in: PCM(22050, 1), opts: EncodeOptions{Format: AAC, Tempo: 0.3}, output: "file:/tmp/x.m4a",
			want: []string{"-f", "s16le", "-ac", "1", "-ar", "22050", "-protocol_whitelist", "pipe", "-i", "pipe:0",
				"-f", "mp4", "-b:a", "64k", "-aac_coder", "fast", "-af", "atempo=0.5,atempo=0.6", "-c:a", "aac",
				"-map_metadata", "-1", "-movflags", "+faststart", "-protocol_whitelist", "file", "file:/tmp/x.m4a"},
		},
		{
			name: "adts remuxed to m4a", in: ADTS, opts: EncodeOptions{Format: AAC}, output: "file:/tmp/x.m4a",
			want: []string{"-f", "aac", "-protocol_whitelist", "pipe", "-i", "pipe:0",
				"-f", "mp4", "-c:a", "copy",
				"-map_metadata", "-1", "-movflags", "+faststart", "-protocol_whitelist", "file", "file:/tmp/x.m4a"},
		},
		{
			name: "flac to a file", in: WAV, opts: EncodeOptions{Format: FLAC, Tempo: 3}, output: "file:/tmp/x.flac",
			want: []string{"-f", "wav", "-protocol_whitelist", "pipe", "-i", "pipe:0",
				"-f", "flac", "-af", "atempo=2,atempo=1.5", "-c:a", "flac",
				"-map_metadata", "-1", "-protocol_whitelist", "file", "file:/tmp/x.flac"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeArgs(tt.in, tt.opts, tt.output)
			if err != nil {
				t.Fatal(err)
			}
			want := append(slices.Clone(tt.want), tail...)
			if !slices.Equal(got, want) {
				t.Errorf("args\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestEncodeArgsRejects(t *testing.T) {
	tests := []struct {
		name   string
		in     Input
		opts   EncodeOptions
		output string
	}{
		{"unknown format", WAV, EncodeOptions{Format: "wma"}, "pipe:1"},
		{"pcm without rate", Input{Container: "s16le"}, EncodeOptions{Format: MP3}, "pipe:1"},
		{"unknown container", Input{Container: "hls"}, EncodeOptions{Format: MP3}, "pipe:1"},
		{"url output", WAV, EncodeOptions{Format: MP3}, "http://example.com/x.mp3"},
		{"adts to mp3", ADTS, EncodeOptions{Format: MP3}, "pipe:1"},
		{"adts with tempo", ADTS, EncodeOptions{Format: AAC, Tempo: 2}, "file:/tmp/x.m4a"},
		{"bare path output", WAV, EncodeOptions{Format: MP3}, "-x.mp3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if args, err := EncodeArgs(tt.in, tt.opts, tt.output); err == nil {
				t.Errorf("EncodeArgs accepted it: %q", args)
			}
		})
	}
}

func TestAtempoChain(t *testing.T) {
	tests := []struct {
		factor float64
		want   string
	}{
		{0, ""},
		{1, ""},
		{-2, ""},
		{1.5, "atempo=1.5"},
		{0.5, "atempo=0.5"},
		{2, "atempo=2"},
		{0.25, "atempo=0.5,atempo=0.5"},
		{4, "atempo=2,atempo=2"},
		{5, "atempo=2,atempo=2,atempo=1.25"},
		{0.2, "atempo=0.5,atempo=0.5,atempo=0.8"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := AtempoChain(tt.factor); got != tt.want {
				t.Errorf("AtempoChain(%v) = %q, want %q", tt.factor, got, tt.want)
			}
		})
	}
}

func TestProbeArgs(t *testing.T) {
	got := ProbeArgs("/tmp/-odd:name.mp3")
	want := []string{"-hide_banner", "-loglevel", "error", "-protocol_whitelist", "file",
		"-format_whitelist", "mov,matroska,webm,mp3,aac,ogg,flac,wav,avi,flv,mpegts,mpeg,asf,aiff,caf,ac3,eac3,amr,w64",
		"-show_entries", "format=format_name,duration,bit_rate:stream=codec_type,codec_name,sample_rate,channels,duration",
		"-of", "json", "file:/tmp/-odd:name.mp3"}
	if !slices.Equal(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}
}

func TestFormatsCoverOrderableFormats(t *testing.T) {
	for _, name := range []string{"mp3", "opus", "aac", "flac"} {
		t.Run(name, func(t *testing.T) {
			f, ok := Format(name)
			if !ok || f.Codec == "" || f.Ext == "" || !strings.HasPrefix(f.ContentType, "audio/") {
				t.Errorf("Format(%q) = %+v, %v", name, f, ok)
			}
		})
	}
}
