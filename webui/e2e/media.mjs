// Helpers shared by the test servers (fake-openai.mjs, mock-server.mjs) and the
// browser tests: media made with espeak-ng + ffmpeg, ffprobe, a small
// multipart reader, transcripts in OpenAI's five formats and the diarizing model's
// diarized_json, files served with Range.
import { execFileSync } from "node:child_process";
import { createReadStream, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The sentence the test clips speak, and the text the fake engine hears in them. */
export const CLIP_TEXT = "Hello from the test clip. It was made for the Parla browser test.";

const run = (cmd, args) => execFileSync(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });

/** A new temporary directory. */
export const tempDir = (prefix = "parla-media-") => mkdtempSync(join(tmpdir(), prefix));

/** Speech of `text` as an mp3 (128 kbit/s, so an upload takes a moment under throttling) in dir. */
export function makeSpeechMp3(dir, text = CLIP_TEXT, name = "speech.mp3") {
  const wav = join(dir, "speech.wav");
  const out = join(dir, name);
  run("espeak-ng", ["-v", "en-us", "-w", wav, text]);
  run("ffmpeg", ["-y", "-loglevel", "error", "-i", wav, "-ac", "1", "-ar", "44100", "-b:a", "128k", out]);
  return out;
}

/**
 * `seconds` of speech as an mp3 (the test sentence again and again, 64 kbit/s): a recording
 * longer than the preview's first 30 s.
 */
export function makeLongSpeechMp3(dir, seconds, name = "long.mp3") {
  const wav = join(dir, "long-speech.wav");
  const out = join(dir, name);
  run("espeak-ng", ["-v", "en-us", "-w", wav, CLIP_TEXT]);
  // -stream_loop -1: the sentence over and over, cut at `seconds` by -t.
  run("ffmpeg", ["-y", "-loglevel", "error", "-stream_loop", "-1", "-i", wav, "-t", String(seconds), "-ac", "1", "-ar", "22050", "-b:a", "64k", out]);
  return out;
}

/**
 * `silence` seconds of digital silence, then the test sentence three times, as an mp3: speech
 * the upload accepts, none in the first `silence` seconds.
 */
export function makeLateSpeechMp3(dir, silence, name = "late.mp3") {
  const wav = join(dir, "late-speech.wav");
  const out = join(dir, name);
  run("espeak-ng", ["-v", "en-us", "-w", wav, CLIP_TEXT]);
  run("ffmpeg", [
    "-y", "-loglevel", "error",
    "-f", "lavfi", "-t", String(silence), "-i", "anullsrc=r=22050:cl=mono",
    "-stream_loop", "2", "-i", wav,
    // concat needs one sample format, rate and layout on both sides.
    "-filter_complex", "[0:a]aformat=sample_fmts=fltp:sample_rates=22050:channel_layouts=mono[q];[1:a]aformat=sample_fmts=fltp:sample_rates=22050:channel_layouts=mono[s];[q][s]concat=n=2:v=0:a=1",
    "-b:a", "64k", out,
  ]);
  return out;
}

/** A small mp4 (a colour card with the speech as its soundtrack), its index first (faststart). */
export function makeSpeechMp4(dir, text = CLIP_TEXT, name = "clip.mp4") {
  const wav = join(dir, "speech.wav");
  const out = join(dir, name);
  run("espeak-ng", ["-v", "en-us", "-w", wav, text]);
  run("ffmpeg", [
    "-y", "-loglevel", "error",
    "-f", "lavfi", "-i", "color=c=0x1f4e79:s=320x180:r=15",
    "-i", wav,
    "-shortest", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p",
    "-c:a", "aac", "-b:a", "64k", "-movflags", "+faststart", out,
  ]);
  return out;
}

/** Duration in seconds of a local file or URL, by ffprobe; null when it has none. */
export function probeSeconds(pathOrUrl) {
  try {
    const out = run("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", pathOrUrl]);
    const s = parseFloat(String(out).trim());
    return Number.isFinite(s) && s > 0 ? s : null;
  } catch {
    return null;
  }
}

/** True when the file has an audio stream. */
export function hasAudio(path) {
  try {
    return String(run("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=index", "-of", "csv=p=0", path])).trim() !== "";
  } catch {
    return false;
  }
}

/** Reads a whole request body (at most `limit` bytes; beyond that resolves null). */
export function readBody(req, limit = 64 << 20) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let n = 0;
    req.on("data", (c) => {
      n += c.length;
      if (n <= limit) chunks.push(c);
    });
    req.on("end", () => resolve(n > limit ? null : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Parses multipart/form-data: {fields: {name: string}, files: {name: {filename, data}}}; null if it is not multipart. */
export function parseMultipart(body, contentType = "") {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!m || !/^multipart\/form-data/i.test(contentType)) return null;
  const delim = Buffer.from(`--${m[1] || m[2]}`);
  const fields = {};
  const files = {};
  let pos = body.indexOf(delim);
  while (pos >= 0) {
    const start = pos + delim.length;
    if (body.subarray(start, start + 2).toString() === "--") break;
    const next = body.indexOf(delim, start);
    if (next < 0) break;
    const part = body.subarray(start + 2, next - 2); // after CRLF, before CRLF
    const sep = part.indexOf("\r\n\r\n");
    const head = part.subarray(0, sep).toString("utf8");
    const data = part.subarray(sep + 4);
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    const filename = /filename="([^"]*)"/i.exec(head)?.[1];
    if (name !== undefined) {
      if (filename !== undefined) files[name] = { filename, data, count: (files[name]?.count || 0) + 1 };
      else fields[name] = data.toString("utf8");
    }
    pos = next;
  }
  return { fields, files };
}

/** The sentences of `text` as segments spread evenly over `seconds`. */
export function segmentsFor(text, seconds) {
  const sentences = text.match(/[^.!?]+[.!?]*/g).map((s) => s.trim()).filter(Boolean);
  const step = seconds / sentences.length;
  return sentences.map((s, i) => ({
    id: i,
    seek: 0,
    start: Math.round(i * step * 1000) / 1000,
    end: Math.round((i + 1) * step * 1000) / 1000,
    text: ` ${s}`,
    tokens: [],
    temperature: 0,
    avg_logprob: -0.2,
    compression_ratio: 1.2,
    no_speech_prob: 0.01,
  }));
}

const stamp = (t, sep) => {
  const ms = Math.round(t * 1000);
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `${p(Math.floor(ms / 3600000))}:${p(Math.floor(ms / 60000) % 60)}:${p(Math.floor(ms / 1000) % 60)}${sep}${p(ms % 1000, 3)}`;
};

/** A transcript of `text` lasting `seconds` in one of OpenAI's formats: {body, type}. */
export function renderTranscript(format, text, seconds, language = "english") {
  const segments = segmentsFor(text, seconds);
  switch (format) {
    case "text":
      return { body: `${text}\n`, type: "text/plain; charset=utf-8" };
    case "srt":
      return {
        body: segments.map((s, i) => `${i + 1}\n${stamp(s.start, ",")} --> ${stamp(s.end, ",")}\n${s.text.trim()}\n`).join("\n"),
        type: "application/x-subrip; charset=utf-8",
      };
    case "vtt":
      return {
        body: `WEBVTT\n\n${segments.map((s) => `${stamp(s.start, ".")} --> ${stamp(s.end, ".")}\n${s.text.trim()}\n`).join("\n")}`,
        type: "text/vtt; charset=utf-8",
      };
    case "verbose_json":
      return { body: JSON.stringify({ task: "transcribe", language, duration: seconds, text, segments }), type: "application/json" };
    case "diarized_json": {
      // As gpt-4o-transcribe-diarize answers: speakers "A", "B", … taking turns, no language, no words.
      const turns = segments.map((s, i) => ({ type: "transcript.text.segment", id: `seg_${i}`, start: s.start, end: s.end, text: s.text.trim(), speaker: String.fromCharCode(65 + (i % 2)) }));
      return { body: JSON.stringify({ task: "transcribe", duration: seconds, text, segments: turns }), type: "application/json" };
    }
    default:
      return { body: JSON.stringify({ text }), type: "application/json" };
  }
}

/** Serves a file with Range support (one range), as a media host does. */
export function serveFile(req, res, path, type) {
  const size = statSync(path).size;
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range || "");
  const headers = { "Content-Type": type, "Accept-Ranges": "bytes" };
  if (!range) {
    res.writeHead(200, { ...headers, "Content-Length": size });
    if (req.method === "HEAD") return res.end();
    return createReadStream(path).pipe(res);
  }
  let start = range[1] === "" ? size - Number(range[2]) : Number(range[1]);
  let end = range[1] === "" || range[2] === "" ? size - 1 : Math.min(Number(range[2]), size - 1);
  start = Math.max(0, start);
  if (start > end || start >= size) {
    res.writeHead(416, { "Content-Range": `bytes */${size}` });
    return res.end();
  }
  res.writeHead(206, { ...headers, "Content-Length": end - start + 1, "Content-Range": `bytes ${start}-${end}/${size}` });
  if (req.method === "HEAD") return res.end();
  return createReadStream(path, { start, end }).pipe(res);
}
