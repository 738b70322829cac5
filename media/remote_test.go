package media

import (
	"slices"
	"strings"
	"testing"
)

func TestRemoteProbeArgs(t *testing.T) {
	tests := []struct {
		url  string
		want []string
	}{
		{"http://127.0.0.1:4000/t/abc/media.mp4", []string{"-hide_banner", "-loglevel", "error",
			"-protocol_whitelist", "http,tcp",
			"-format_whitelist", MediaFormats,
			"-show_entries", "format=format_name,duration,bit_rate:stream=codec_type,codec_name,sample_rate,channels,duration",
			"-of", "json", "http://127.0.0.1:4000/t/abc/media.mp4"}},
	}
	for _, tt := range tests {
		got := RemoteProbeArgs(tt.url)
		if !slices.Equal(got, tt.want) {
			t.Errorf("args\n got %q\nwant %q", got, tt.want)
		}
		for i, a := range got {
			if a == "-protocol_whitelist" && got[i+1] != "http,tcp" {
				t.Errorf("protocol whitelist %q allows more than http and tcp", got[i+1])
			}
		}
	}
	for _, demuxer := range []string{"hls", "dash", "concat", "image2", "tee", "ffmetadata", "lavfi"} {
		if slices.Contains(strings.Split(MediaFormats, ","), demuxer) {
			t.Errorf("demuxer %s is whitelisted for remote links", demuxer)
		}
	}
}

func TestFetchAudioArgs(t *testing.T) {
	got := FetchAudioArgs("http://127.0.0.1:4000/t/abc/media.mp4", "/tmp/-odd:name.mka")
	want := []string{
		"-format_whitelist", MediaFormats, "-protocol_whitelist", "http,tcp", "-i", "http://127.0.0.1:4000/t/abc/media.mp4",
		"-f", "matroska", "-c:a", "copy", "-dn", "-map", "0:a:0", "-map_metadata", "-1",
		"-protocol_whitelist", "file", "-sn", "-vn", "file:/tmp/-odd:name.mka",
		"-nostdin", "-hide_banner", "-loglevel", "error", "-y",
	}
	if !slices.Equal(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}
}

func TestExtractAudioArgs(t *testing.T) {
	got := ExtractAudioArgs("/tmp/x/-v.source", "/tmp/x/a.mka")
	want := []string{
		"-format_whitelist", MediaFormats, "-protocol_whitelist", "file", "-i", "file:/tmp/x/-v.source",
		"-f", "matroska", "-c:a", "copy", "-dn", "-map", "0:a:0", "-map_metadata", "-1",
		"-protocol_whitelist", "file", "-sn", "-vn", "file:/tmp/x/a.mka",
		"-nostdin", "-hide_banner", "-loglevel", "error", "-y",
	}
	if !slices.Equal(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}
}
