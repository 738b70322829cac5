package media

import (
	"slices"
	"testing"
	"time"
)

func TestPlanChunks(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name   string
		total  time.Duration
		size   int64
		limit  int64
		maxLen time.Duration
		want   []Chunk
	}{
		{name: "within both bounds", total: 60 * s, size: 1000, limit: 2000, maxLen: 120 * s,
			want: []Chunk{{0, 60 * s}}},
		{name: "exactly at both bounds", total: 60 * s, size: 2000, limit: 2000, maxLen: 60 * s,
			want: []Chunk{{0, 60 * s}}},
		{name: "unknown duration", total: 0, size: 5000, limit: 2000, maxLen: 60 * s,
			want: []Chunk{{0, 0}}},
		{name: "no bounds", total: 3600 * s, size: 1 << 30,
			want: []Chunk{{0, 3600 * s}}},
		{name: "too long: equal chunks within maxLen", total: 50 * s, size: 100, limit: 2000, maxLen: 20 * s,
			want: []Chunk{{0, 16667 * time.Millisecond}, {16667 * time.Millisecond, 16667 * time.Millisecond}, {33334 * time.Millisecond, 16666 * time.Millisecond}}},
		{name: "too long by a multiple", total: 40 * s, size: 100, limit: 2000, maxLen: 20 * s,
			want: []Chunk{{0, 20 * s}, {20 * s, 20 * s}}},
		// 100 s at 1000 B/s with a 30,000-byte limit: 27 s fit with the margin, so 4 chunks.
		{name: "too big: bytes decide", total: 100 * s, size: 100_000, limit: 30_000, maxLen: time.Hour,
			want: []Chunk{{0, 25 * s}, {25 * s, 25 * s}, {50 * s, 25 * s}, {75 * s, 25 * s}}},
		{name: "too big and too long: the tighter bound wins", total: 100 * s, size: 100_000, limit: 30_000, maxLen: 10 * s,
			want: []Chunk{{0, 10 * s}, {10 * s, 10 * s}, {20 * s, 10 * s}, {30 * s, 10 * s}, {40 * s, 10 * s},
				{50 * s, 10 * s}, {60 * s, 10 * s}, {70 * s, 10 * s}, {80 * s, 10 * s}, {90 * s, 10 * s}}},
		{name: "tiny limit is bounded by one second chunks", total: 3 * s, size: 1 << 20, limit: 1,
			want: []Chunk{{0, s}, {s, s}, {2 * s, s}}},
		{name: "only just too big: margin makes two", total: 10 * s, size: 1001, limit: 1000,
			want: []Chunk{{0, 5 * s}, {5 * s, 5 * s}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanChunks(tt.total, tt.size, tt.limit, tt.maxLen)
			if !slices.Equal(got, tt.want) {
				t.Errorf("PlanChunks(%v, %d, %d, %v)\n got %v\nwant %v", tt.total, tt.size, tt.limit, tt.maxLen, got, tt.want)
			}
		})
	}
}

// TestPlanChunksInvariants checks over many shapes that chunks tile the recording and
// respect both bounds.
func TestPlanChunksInvariants(t *testing.T) {
	for _, total := range []time.Duration{1500 * time.Millisecond, 59 * time.Second, 3*time.Hour + 7*time.Millisecond} {
		for _, size := range []int64{10_000, 26 << 20, 500 << 20} {
			for _, maxLen := range []time.Duration{0, 7 * time.Second, 20 * time.Minute} {
				const limit = 25 << 20
				chunks := PlanChunks(total, size, limit, maxLen)
				var next time.Duration
				for i, c := range chunks {
					if c.Start != next || c.Length <= 0 {
						t.Fatalf("total %v size %d maxLen %v: chunk %d = %v, want start %v and a length", total, size, maxLen, i, c, next)
					}
					if maxLen > 0 && c.Length > maxLen {
						t.Errorf("chunk %d lasts %v, above %v", i, c.Length, maxLen)
					}
					// Only the one-second floor may break the byte bound (a 500 MB second).
					if bytes := float64(size) * float64(c.Length) / float64(total); bytes > limit && c.Length > minChunk {
						t.Errorf("chunk %d holds about %.0f bytes, above %d", i, bytes, limit)
					}
					next = c.Start + c.Length
				}
				if next != total {
					t.Errorf("total %v size %d maxLen %v: chunks end at %v", total, size, maxLen, next)
				}
			}
		}
	}
}

func TestReencodeArgs(t *testing.T) {
	got := ReencodeArgs("/up/-odd:name.mkv", "/tmp/x/audio.mp3", 32000, 0)
	want := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y",
		"-protocol_whitelist", "file", "-format_whitelist", MediaFormats, "-i", "file:/up/-odd:name.mkv",
		"-map", "0:a:0", "-ac", "1", "-ar", "16000",
		"-c:a", "libmp3lame", "-b:a", "32000", "-compression_level", "5",
		"-map_metadata", "-1", "-protocol_whitelist", "file", "-f", "mp3", "file:/tmp/x/audio.mp3"}
	if !slices.Equal(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}
}

// The engine is given at most the paid length and its margin (EngineLimit).
func TestReencodeArgsLimit(t *testing.T) {
	got := ReencodeArgs("/up/a.mkv", "/tmp/x/audio.mp3", 32000, 90500*time.Millisecond)
	if i := slices.Index(got, "-t"); i < 0 || got[i+1] != "90.500" || i > slices.Index(got, "-ac") || i < slices.Index(got, "-i") {
		t.Errorf("args %q: want -t 90.500 among the output options", got)
	}
}

func TestChunkArgs(t *testing.T) {
	head := []string{"-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-protocol_whitelist", "file"}
	tail := []string{"-format_whitelist", "mp3", "-i", "file:/t/in.mp3", "-map", "0:a:0", "-c:a", "copy", "-map_metadata", "-1",
		"-protocol_whitelist", "file", "-f", "mp3", "file:/t/c1.mp3"}
	tests := []struct {
		name          string
		start, length time.Duration
		want          []string
	}{
		{name: "first chunk", start: 0, length: 20 * time.Second, want: []string{"-t", "20.000"}},
		{name: "middle chunk", start: 16667 * time.Millisecond, length: 16667 * time.Millisecond,
			want: []string{"-ss", "16.667", "-t", "16.667"}},
		{name: "last chunk to the end", start: 20*time.Minute + 1600*time.Microsecond, length: 0,
			want: []string{"-ss", "1200.002"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ChunkArgs("/t/in.mp3", "/t/c1.mp3", tt.start, tt.length)
			want := slices.Concat(head, tt.want, tail)
			if !slices.Equal(got, want) {
				t.Errorf("args\n got %q\nwant %q", got, want)
			}
		})
	}
}
