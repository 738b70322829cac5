package media

import (
	"strconv"
	"time"
)

// Speech-to-text uploads are re-encoded to what speech recognisers hear anyway: Whisper
// resamples everything to 16 kHz mono, so more rate or channels only cost upload bytes.
const (
	// SpeechSampleRate is the sample rate of re-encoded speech, in Hz.
	SpeechSampleRate = 16000
	// SpeechBitrate is the MP3 bitrate of re-encoded speech, in bits per second: about
	// 14 MB per hour, so a 25 MB upload limit holds more than 90 minutes.
	SpeechBitrate = 32000
)

// chunkFill is the share of the byte limit a planned chunk aims for. The plan assumes a
// constant bitrate; the margin absorbs frame rounding, the MP3 header and any bitrate
// variation along the file.
const chunkFill = 0.9

// minChunk bounds the number of chunks for a tiny byte limit: below a second a chunk would
// carry no whole word anyway.
const minChunk = time.Second

// Chunk is one piece of a recording: where it starts and how long it lasts.
type Chunk struct {
	Start  time.Duration
	Length time.Duration
}

// PlanChunks cuts a recording of the given total duration and size in bytes into chunks
// that each stay below limit bytes (with a safety margin, assuming a constant bitrate) and
// last at most maxLen. A limit or maxLen of 0 means no such bound. The chunks have equal
// lengths in whole milliseconds (the last one takes the rest), cover the recording without
// gaps or overlap, and there are as few as the bounds allow. A recording within both
// bounds, or of unknown (zero) duration, is one chunk.
func PlanChunks(total time.Duration, size, limit int64, maxLen time.Duration) []Chunk {
	length := total
	if maxLen > 0 && length > maxLen {
		length = maxLen
	}
	if limit > 0 && size > limit {
		byBytes := time.Duration(float64(total) * chunkFill * float64(limit) / float64(size))
		length = min(length, byBytes)
	}
	if total <= 0 || length >= total {
		return []Chunk{{Start: 0, Length: max(total, 0)}}
	}
	length = max(length, minChunk)
	n := ceilDiv(total, length)
	step := ceilDiv(ceilDiv(total, n), time.Millisecond) * time.Millisecond
	chunks := make([]Chunk, 0, n)
	for start := time.Duration(0); start < total; start += step {
		chunks = append(chunks, Chunk{Start: start, Length: min(step, total-start)})
	}
	return chunks
}

// ceilDiv divides two positive durations, rounding up.
func ceilDiv(a, b time.Duration) time.Duration {
	return (a + b - 1) / b
}

// ReencodeArgs builds the ffmpeg arguments that turn the first audio stream of the local
// file in (any format ffmpeg reads, video included) into a small mono MP3 for speech
// recognition at out, with bitrate in bits per second (SpeechBitrate), and at most limit
// of it (0: all; EngineLimit of the paid length).
func ReencodeArgs(in, out string, bitrate int, limit time.Duration) []string {
	args := append([]string(nil), globalArgs...)
	// A local file and nothing it points to (see MediaFormats).
	args = append(args, localInput(in)...)
	args = append(args,
		// The first audio stream only: no video, cover art, subtitles or second soundtrack.
		"-map", "0:a:0",
	)
	if limit > 0 {
		// Never more than was paid for goes to the engine, whatever the measure said: -t
		// goes by the file's timestamps, which a file can slow down, so the encoded frames
		// are counted too (a fixed number of samples each), and the smaller bound holds.
		args = append(args, "-t", seconds(limit), "-frames:a", strconv.FormatInt(mp3FramesOf(limit), 10))
	}
	args = append(args,
		"-ac", "1",
		"-ar", strconv.Itoa(SpeechSampleRate),
		"-c:a", "libmp3lame",
		// Constant bitrate, so that bytes per second are the same all along the file and
		// PlanChunks can turn a byte limit into a duration.
		"-b:a", strconv.Itoa(bitrate),
		// LAME quality 5 of 0–9: ~3x faster than the default, no loss a recogniser hears.
		"-compression_level", "5",
		// Nothing of the visitor's file but its sound leaves the machine.
		"-map_metadata", "-1",
		"-protocol_whitelist", "file",
		"-f", "mp3", fileURL(out),
	)
	return args
}

// mp3FramesOf is how many MP3 frames at SpeechSampleRate hold d: 576 samples a frame below
// 32 kHz (MPEG-2 and 2.5 Layer III), 1152 from it (MPEG-1), rounded up.
func mp3FramesOf(d time.Duration) int64 {
	perFrame := int64(1152)
	if SpeechSampleRate < 32000 {
		perFrame = 576
	}
	samples := int64(d.Seconds()*SpeechSampleRate + 0.5)
	return (samples + perFrame - 1) / perFrame
}

// ChunkArgs builds the ffmpeg arguments that copy the audio of the local MP3 file in from
// start for length (0: to the end) into the MP3 file out, without re-encoding. The input
// is expected to be ReencodeArgs' constant-bitrate output, where seeking is exact to the
// frame (36 ms at 16 kHz).
func ChunkArgs(in, out string, start, length time.Duration) []string {
	args := append([]string(nil), globalArgs...)
	args = append(args, "-protocol_whitelist", "file")
	// Before -i, -ss and -t seek in the input instead of decoding and discarding up to start.
	if start > 0 {
		args = append(args, "-ss", seconds(start))
	}
	if length > 0 {
		args = append(args, "-t", seconds(length))
	}
	// Our own MP3 (ReencodeArgs' output), read as nothing else.
	args = append(args, "-format_whitelist", "mp3", "-i", fileURL(in),
		"-map", "0:a:0",
		"-c:a", "copy",
		"-map_metadata", "-1",
		"-protocol_whitelist", "file",
		"-f", "mp3", fileURL(out),
	)
	return args
}

// seconds formats d for ffmpeg's time options, to the millisecond.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}
