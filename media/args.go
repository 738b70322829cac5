package media

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	ffmpeg "github.com/u2takey/ffmpeg-go"
)

// Audio formats a visitor can order (the same names as providers.SpeechFormats).
const (
	MP3  = "mp3"
	Opus = "opus"
	AAC  = "aac"
	FLAC = "flac"
	// WAVFile, RawPCM and ADTSStream are for the API's speech (api/v1) only, made from an
	// engine's FLAC (FLACInput): 16-bit PCM in a WAV file, the same samples bare at 24 kHz
	// mono, as OpenAI's "pcm" is, and AAC in raw ADTS frames, as OpenAI's "aac" is. The
	// site's orders never use them (providers.SpeechFormats).
	WAVFile    = "wav"
	RawPCM     = "pcm"
	ADTSStream = "aac-adts"
)

// FormatInfo describes how an orderable audio format is encoded and delivered.
type FormatInfo struct {
	// Codec is the ffprobe codec_name of the encoded audio.
	Codec string
	// Ext is the file extension to give the download, without the dot.
	Ext string
	// ContentType is the MIME type to serve the file with.
	ContentType string

	encoder string   // ffmpeg encoder
	muxer   string   // ffmpeg output format (-f)
	bitrate string   // -b:a, empty for lossless
	rate    string   // -ar, the encoded sample rate; empty keeps the input's
	level   string   // -compression_level, the encoder's effort; empty for its default
	extra   []string // further options, as flag/value pairs, each commented below
	seek    bool     // the muxer must seek back into its output, so ffmpeg writes a temp file

	// How one part of a long audio is encoded (PartArgs) so that EncodeParts can join the
	// parts without re-encoding: the muxer and the options that replace extra.
	partMuxer string
	partExtra []string
}

// formats is the table every encode is built from.
//
// AAC is delivered as M4A (AAC-LC in an MP4 container with its index at the front) rather
// than a raw ADTS .aac stream. We measured ADTS on speech: players and ffprobe estimate its
// duration from the bitrate and were 12% off on a 5-second sentence (pauses encode small),
// so seek bars and the shown length are wrong; M4A carries the exact duration, seeks
// precisely, starts playing while downloading (faststart) and plays in every browser, on
// iOS, Android, macOS and Windows. The price is a temp file (MP4 writes its index last), the
// same path FLAC already needs. OpenAI's "aac" answers are ADTS and are remuxed (no
// re-encode) into the same container, so both engines deliver the same kind of file.
var formats = map[string]FormatInfo{
	MP3: {
		Codec: "mp3", Ext: "mp3", ContentType: "audio/mpeg",
		encoder: "libmp3lame", muxer: "mp3",
		// 128 kb/s keeps the product page's promise of "about 1 MB per minute".
		bitrate: "128k",
		// LAME quality 5 (0 best … 9 fastest): the default 3 takes ~3x longer on 50 minutes of
		// speech with no audible gain at 128 kb/s.
		level: "5",
		// Parts are bare MPEG frames: no ID3 tag (ffmpeg's encoder tag) and no Xing/LAME
		// frame, which would sit in the middle of the joined file and hold one part's count.
		partMuxer: "mp3",
		partExtra: []string{"id3v2_version", "0", "write_xing", "0"},
	},
	Opus: {
		Codec: "opus", Ext: "opus", ContentType: "audio/ogg",
		encoder: "libopus", muxer: "ogg",
		bitrate: "48k",
		// Speech sources here are 22.05 kHz (espeak) or 24 kHz (OpenAI PCM): encoding at
		// 24 kHz keeps all of it and is about 3x faster than libopus' default 48 kHz.
		rate: "24000",
		// Encoder effort 5 of 10: 3x faster than the default 10, inaudible for speech.
		level: "5",
		// Parts are Ogg files whose pages oggJoin puts in one stream.
		partMuxer: "ogg",
	},
	AAC: {
		Codec: "aac", Ext: "m4a", ContentType: "audio/mp4",
		encoder: "aac", muxer: "mp4",
		bitrate: "64k",
		extra: []string{
			// ffmpeg's default "twoloop" coder is ~7x slower; "fast" is plenty for speech at
			// 64 kb/s and keeps a 50,000-character order within the time budget.
			"aac_coder", "fast",
			// Rewrite the file with the index (moov) first, so playback can start before
			// the whole download arrived.
			"movflags", "+faststart",
		},
		seek: true,
		// Parts are ADTS streams (every frame carries its own header, so they simply
		// follow each other), remuxed once into MP4 at the end.
		partMuxer: "adts",
		partExtra: []string{"aac_coder", "fast"},
	},
	ADTSStream: {
		Codec: "aac", Ext: "aac", ContentType: "audio/aac",
		encoder: "aac", muxer: "adts",
		bitrate: "64k",
		extra:   []string{"aac_coder", "fast"},
	},
	WAVFile: {
		Codec: "pcm_s16le", Ext: "wav", ContentType: "audio/wav",
		encoder: "pcm_s16le", muxer: "wav",
		seek: true, // the header's sizes are written at the end
	},
	RawPCM: {
		Codec: "pcm_s16le", Ext: "pcm", ContentType: "audio/pcm",
		encoder: "pcm_s16le", muxer: "s16le",
		rate:  "24000",
		extra: []string{"ac", "1"},
	},
	FLAC: {
		Codec: "flac", Ext: "flac", ContentType: "audio/flac",
		encoder: "flac", muxer: "flac",
		// The FLAC muxer rewrites STREAMINFO (total samples, MD5) at the end; on a pipe it
		// cannot, and the file would carry no duration.
		seek: true,
		// Parts are FLAC files whose frames joinFLAC renumbers under one STREAMINFO.
		partMuxer: "flac",
	},
}

// Format returns the description of an orderable audio format.
func Format(name string) (FormatInfo, bool) {
	f, ok := formats[name]
	return f, ok
}

// Input describes the audio an encoder reads from its standard input.
type Input struct {
	// Container is "wav" (the header carries rate and channels), "s16le" (raw signed
	// 16-bit little-endian PCM; SampleRate and Channels are then required) or "adts"
	// (already encoded AAC, which is only remuxed, into the AAC format).
	Container string
	// SampleRate in Hz, for raw PCM.
	SampleRate int
	// Channels, for raw PCM.
	Channels int
}

// PCM returns the Input for raw s16le PCM at rate Hz with the given channel count.
func PCM(rate, channels int) Input {
	return Input{Container: "s16le", SampleRate: rate, Channels: channels}
}

// WAV is the Input for a RIFF/WAVE stream.
var WAV = Input{Container: "wav"}

// ADTS is the Input for a raw AAC (ADTS) stream, remuxed without re-encoding.
var ADTS = Input{Container: "adts"}

// FLACInput is a FLAC file on standard input (an engine's result, turned into WAVFile or
// RawPCM for the API).
var FLACInput = Input{Container: "flac"}

// EncodeOptions says what an encode produces.
type EncodeOptions struct {
	// Format is one of MP3, Opus, AAC, FLAC.
	Format string
	// Tempo speeds the audio up (>1) or slows it down (<1) without changing its pitch.
	// 0 and 1 leave it alone. Any positive factor works: it is split into a chain of
	// ffmpeg atempo filters.
	Tempo float64
}

// globalArgs go on every ffmpeg run.
var globalArgs = []string{
	// Never read the terminal for interactive commands: stdin carries audio, or nothing.
	"-nostdin",
	"-hide_banner",
	// Only errors reach stderr, so the capped tail in an error is the cause, not progress.
	"-loglevel", "error",
	// Overwrite the (just created, empty) temp output file instead of asking.
	"-y",
}

// EncodeArgs builds the ffmpeg arguments that read in from standard input and write the
// encoded file to output: "pipe:1" for standard output, or "file:<path>".
func EncodeArgs(in Input, opts EncodeOptions, output string) ([]string, error) {
	f, ok := formats[opts.Format]
	if !ok {
		return nil, fmt.Errorf("unknown audio format %q", opts.Format)
	}
	return encodeArgs(in, opts, f, output)
}

// PartArgs builds the ffmpeg arguments that encode one part of a long audio, a WAV stream
// on standard input, into output ("file:<path>", or "pipe:1" for an mp3 part, whose frames
// stand alone) in the form EncodeParts joins without
// re-encoding: mp3 as bare frames, opus in Ogg, aac as ADTS, flac as a FLAC file. Encoder,
// bitrate, rate, effort and tempo are those of EncodeArgs.
func PartArgs(opts EncodeOptions, output string) ([]string, error) {
	f, ok := formats[opts.Format]
	if !ok || f.partMuxer == "" { // the API's wav and pcm are never made in parts
		return nil, fmt.Errorf("unknown audio format %q", opts.Format)
	}
	if !strings.HasPrefix(output, "file:") && (output != "pipe:1" || opts.Format != MP3) {
		return nil, fmt.Errorf("part output %q is not file:<path> (or pipe:1 for mp3)", output)
	}
	f.muxer, f.extra = f.partMuxer, f.partExtra
	return encodeArgs(WAV, opts, f, output)
}

// encodeArgs builds the arguments of EncodeArgs and PartArgs for the format f.
func encodeArgs(in Input, opts EncodeOptions, f FormatInfo, output string) ([]string, error) {
	inKw := ffmpeg.KwArgs{
		// The input is our own pipe and nothing else: no files, no network, no playlists.
		"protocol_whitelist": "pipe",
	}
	switch in.Container {
	case "wav":
		inKw["format"] = "wav"
	case "s16le":
		if in.SampleRate <= 0 || in.Channels <= 0 {
			return nil, fmt.Errorf("raw PCM input needs a sample rate and channels, got %d Hz, %d channels", in.SampleRate, in.Channels)
		}
		inKw["format"] = "s16le"
		inKw["ar"] = strconv.Itoa(in.SampleRate)
		inKw["ac"] = strconv.Itoa(in.Channels)
	case "flac":
		inKw["format"] = "flac"
	case "adts":
		if opts.Format != AAC || AtempoChain(opts.Tempo) != "" {
			return nil, fmt.Errorf("ADTS input can only be remuxed to %s, without tempo change", AAC)
		}
		inKw["format"] = "aac"
	default:
		return nil, fmt.Errorf("unknown input container %q", in.Container)
	}

	outKw := ffmpeg.KwArgs{
		"format": f.muxer,
		"c:a":    f.encoder,
		// Drop input metadata (espeak/OpenAI tags): the file carries nothing but audio.
		"map_metadata": "-1",
	}
	if f.bitrate != "" {
		outKw["audio_bitrate"] = f.bitrate
	}
	if f.rate != "" {
		outKw["ar"] = f.rate
	}
	if f.level != "" {
		outKw["compression_level"] = f.level
	}
	for i := 0; i+1 < len(f.extra); i += 2 {
		outKw[f.extra[i]] = f.extra[i+1]
	}
	if in.Container == "adts" {
		// Already AAC: copy the packets into the new container, no second lossy pass.
		outKw["c:a"] = "copy"
		delete(outKw, "audio_bitrate")
		delete(outKw, "aac_coder")
	}
	if chain := AtempoChain(opts.Tempo); chain != "" {
		outKw["af"] = chain
	}
	// The output is standard output or one temp file: whitelist exactly that protocol.
	switch {
	case output == "pipe:1":
		outKw["protocol_whitelist"] = "pipe"
	case strings.HasPrefix(output, "file:"):
		outKw["protocol_whitelist"] = "file"
	default:
		return nil, fmt.Errorf("output %q is neither pipe:1 nor file:<path>", output)
	}

	args := ffmpeg.Input("pipe:0", inKw).
		Output(output, outKw).
		GlobalArgs(globalArgs...).
		GetArgs()
	return args, nil
}

// AtempoChain returns the ffmpeg audio filter that changes tempo by factor, or "" for 0, 1
// or a negative factor. Each atempo stage is kept within 0.5–2, where the filter sounds
// best (and older ffmpeg builds accept nothing else), so 0.25 becomes
// "atempo=0.5,atempo=0.5".
func AtempoChain(factor float64) string {
	if factor <= 0 || math.Abs(factor-1) < 1e-9 {
		return ""
	}
	var stages []string
	for factor > 2 {
		stages = append(stages, "atempo=2")
		factor /= 2
	}
	for factor < 0.5 {
		stages = append(stages, "atempo=0.5")
		factor /= 0.5
	}
	if math.Abs(factor-1) >= 1e-9 {
		stages = append(stages, "atempo="+strconv.FormatFloat(factor, 'f', -1, 64))
	}
	return strings.Join(stages, ",")
}

// MediaFormats are the only demuxers ffmpeg and ffprobe may use on a visitor's file or
// link (every call on one passes -format_whitelist MediaFormats). Playlist and reference
// formats (hls, dash, concat/ffconcat, image2 and the image pipes, tee, …) are left out on
// purpose: they make ffmpeg open the files or URLs written inside the input — a local
// path, past the relay to any host, data: or subfile: — so a visitor's upload could read
// the server's files. They are refused as unreadable before anything else is opened.
const MediaFormats = "mov,matroska,webm,mp3,aac,ogg,flac,wav,avi,flv,mpegts,mpeg,asf,aiff,caf,ac3,eac3,amr,w64"

// localInput is how every local input that came from a visitor is opened: the file and
// nothing it points to (protocol "file" only), read only by a media demuxer.
func localInput(path string) []string {
	return []string{"-protocol_whitelist", "file", "-format_whitelist", MediaFormats, "-i", fileURL(path)}
}

// probeEntries are the fields parseProbe reads.
const probeEntries = "format=format_name,duration,bit_rate:stream=codec_type,codec_name,sample_rate,channels,duration"

// ProbeArgs builds the ffprobe arguments that describe the local file at path as JSON.
func ProbeArgs(path string) []string {
	return []string{
		"-hide_banner",
		"-loglevel", "error",
		// A local file and nothing it points to: a crafted playlist cannot make ffprobe
		// open other files, URLs or subprocess-like protocols.
		"-protocol_whitelist", "file",
		"-format_whitelist", MediaFormats,
		"-show_entries", probeEntries,
		"-of", "json",
		fileURL(path),
	}
}

// fileURL turns a path into a "file:" URL so that a name starting with "-" or containing
// ":" is never read as an option or another protocol.
func fileURL(path string) string {
	return "file:" + path
}
