// A local stand-in for OpenAI's speech-to-text API (api.openai.com is out of
// reach here), for the browser tests against the real server, which runs with
//   STT_ENGINE=openai OPENAI_API_KEY=test OPENAI_BASE_URL=http://127.0.0.1:<port>/v1
//
//   node webui/e2e/fake-openai.mjs            (PORT, default 18090)
//
// POST /v1/audio/transcriptions (multipart) checks the bearer key and the
// model and file fields, measures the received audio with ffprobe and answers
// in the requested format (verbose_json: segments spread over that length). The
// diarizing model (gpt-4o-transcribe-diarize) answers diarized_json only, with speakers,
// and, as OpenAI, refuses more than 30 s without chunking_strategy, and word granularity.
// GET|HEAD /media/clip.mp4 serves a generated video with Range support: the
// link the video-to-text test pastes. GET /stats tells what was asked. POST
// /v1/audio/speech answers a second of tone in the asked format, as a Kokoro-FastAPI
// server behind TTS_ENGINE=openai,espeak would answer with speech (the engines journey).
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { CLIP_TEXT, makeSpeechMp4, parseMultipart, probeSeconds, readBody, renderTranscript, serveFile, tempDir } from "./media.mjs";

const PORT = Number(process.env.PORT || 18090);
const dir = tempDir("parla-fake-openai-");
const clip = makeSpeechMp4(dir);
const FORMATS = ["json", "text", "srt", "verbose_json", "vtt", "diarized_json"];
const DIARIZE = "gpt-4o-transcribe-diarize";
const stats = { transcriptions: 0, requests: [] };

const error = (res, status, message, type = "invalid_request_error") => {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ error: { message, type, param: null, code: null } }));
};

async function transcribe(req, res) {
  if (!/^Bearer \S+/.test(req.headers.authorization || "")) return error(res, 401, "missing API key");
  const form = parseMultipart(await readBody(req), req.headers["content-type"]);
  if (!form) return error(res, 400, "expected multipart/form-data");
  const { model, response_format: format = "json", language = "" } = form.fields;
  const file = form.files.file;
  if (!model) return error(res, 400, "model is required");
  if (!file || file.data.length === 0) return error(res, 400, "file is required");
  if (!FORMATS.includes(format)) return error(res, 400, `response_format ${format} is not supported`);
  if ((model === DIARIZE) !== (format === "diarized_json")) return error(res, 400, `response_format ${format} is not compatible with model ${model}`);
  if (model === DIARIZE && form.fields["timestamp_granularities[]"]) return error(res, 400, "timestamp_granularities is not supported for diarization models");
  const work = join(dir, `upload-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(work);
  const path = join(work, file.filename.replace(/[^\w.-]/g, "_") || "audio");
  writeFileSync(path, file.data);
  const seconds = probeSeconds(path);
  rmSync(work, { recursive: true, force: true });
  stats.transcriptions++;
  const chunking = form.fields.chunking_strategy || "";
  stats.requests.push({ model, format, language, chunking, filename: file.filename, bytes: file.data.length, seconds });
  if (!seconds) return error(res, 400, "Audio file might be corrupted or unsupported");
  if (model === DIARIZE && seconds > 30 && !chunking) return error(res, 400, "chunking_strategy is required for diarization models when input is longer than 30 seconds");
  const { body, type } = renderTranscript(format, CLIP_TEXT, Math.round(seconds * 1000) / 1000, language || "english");
  res.writeHead(200, { "Content-Type": type });
  res.end(body);
}

// ffmpeg's output format for each response_format of /v1/audio/speech.
const SPEECH_FORMATS = { mp3: ["mp3"], flac: ["flac"], wav: ["wav"], opus: ["ogg", "-c:a", "libopus"], aac: ["adts"], pcm: ["s16le"] };

/** /v1/audio/speech as a Kokoro-FastAPI server answers it: a second of tone, 24 kHz mono, in the asked format. */
async function speak(req, res) {
  const body = JSON.parse((await readBody(req)).toString() || "{}");
  stats.speech = (stats.speech || 0) + 1;
  const [fmt, ...codec] = SPEECH_FORMATS[body.response_format || "mp3"] || SPEECH_FORMATS.mp3;
  const audio = execFileSync("ffmpeg", ["-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=330:sample_rate=24000:duration=1", "-ac", "1", ...codec, "-f", fmt, "pipe:1"]);
  res.writeHead(200, { "Content-Type": "application/octet-stream" });
  res.end(audio);
}

const server = createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  if (req.method === "POST" && path === "/v1/audio/transcriptions") {
    transcribe(req, res).catch((err) => error(res, 500, String(err), "server_error"));
    return;
  }
  if (req.method === "POST" && path === "/v1/audio/speech") {
    speak(req, res).catch((err) => error(res, 500, String(err), "server_error"));
    return;
  }
  if ((req.method === "GET" || req.method === "HEAD") && path === "/media/clip.mp4") return serveFile(req, res, clip, "video/mp4");
  if (req.method === "GET" && path === "/stats") {
    res.writeHead(200, { "Content-Type": "application/json" });
    return res.end(JSON.stringify(stats));
  }
  if (req.method === "GET" && path === "/healthz") {
    res.writeHead(200, { "Content-Type": "application/json" });
    return res.end('{"ok":true}');
  }
  return error(res, 404, `no route ${req.method} ${path}`);
});

const stop = () => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
server.listen(PORT, "127.0.0.1", () => console.log(`fake OpenAI on http://127.0.0.1:${PORT} (clip ${probeSeconds(clip)} s)`));
