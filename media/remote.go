package media

import ffmpeg "github.com/u2takey/ffmpeg-go"

// Visitors' links reach ffmpeg and ffprobe only as loopback relay URLs (package
// media/links); these builders are the only argument lists such a URL is ever opened with.

// relayWhitelist is the only protocol set a relayed link is opened with: HTTP over TCP to
// the relay. No file, pipe, crypto, data, subfile, hls, concat, etc.
const relayWhitelist = "http,tcp"

// RemoteProbeArgs builds the ffprobe arguments that describe a relayed link as JSON. url
// must be a relay URL, never a visitor's link.
func RemoteProbeArgs(url string) []string {
	return []string{
		"-hide_banner",
		"-loglevel", "error",
		"-protocol_whitelist", relayWhitelist,
		"-format_whitelist", MediaFormats,
		"-show_entries", probeEntries,
		"-of", "json",
		url,
	}
}

// FetchAudioArgs builds the ffmpeg arguments that copy the first audio stream of the relayed
// link input into the Matroska file dst. Copying rather than re-encoding keeps the audio as
// the source made it and costs no CPU (the speech-to-text path decodes it anyway); Matroska
// holds every codec a video's audio comes in (AAC, Opus, Vorbis, MP3, AC-3, FLAC, PCM).
func FetchAudioArgs(input, dst string) []string {
	return copyAudioArgs(input, relayWhitelist, dst)
}

// ExtractAudioArgs is FetchAudioArgs for a video downloaded whole to the local file src
// (from a host that does not serve byte ranges).
func ExtractAudioArgs(src, dst string) []string {
	return copyAudioArgs(fileURL(src), "file", dst)
}

// copyAudioArgs copies the first audio stream of input, opened with the given protocols
// and only media demuxers, into the Matroska file dst.
func copyAudioArgs(input, protocols, dst string) []string {
	return ffmpeg.Input(input, ffmpeg.KwArgs{
		"protocol_whitelist": protocols,
		"format_whitelist":   MediaFormats,
	}).Output(fileURL(dst), ffmpeg.KwArgs{
		// The first audio stream only; no video, subtitles or data streams.
		"map": "0:a:0",
		"vn":  "", "sn": "", "dn": "",
		"c:a":          "copy",
		"map_metadata": "-1",
		"format":       "matroska",
		// The output is one local file and nothing else.
		"protocol_whitelist": "file",
	}).GlobalArgs(globalArgs...).GetArgs()
}
