const TRANSCRIPT_FORMATS = ["json", "text", "srt", "verbose_json", "vtt"];
// The engines' transcription languages (ISO 639-1), as the server lists them.
const STT_LANGUAGES = "af ar hy az be bs bg ca zh hr cs da nl en et fi fr gl de el he hi hu is id it ja kn kk ko lv lt mk ms mr mi ne no fa pl pt ro ru sr sk sl es sw sv tl ta th tr uk ur vi cy".split(" ");

/** A GET /api/config answer as the API contract describes it (the default prices; `unitChars` and `perSeconds` are the legacy names of `per`). */
export const CONFIG = {
  version: "v3.3.2",
  currency: "eur",
  linkDays: 10,
  payment: { mode: "test", publishableKey: "" },
  services: {
    tts: { open: true },
    sst: { open: true },
    vtt: { open: true },
  },
  tts: {
    voices: ["alloy", "echo", "fable", "onyx", "nova", "shimmer"],
    defaultVoice: "alloy",
    formats: ["mp3", "opus", "aac", "flac"],
    defaultFormat: "mp3",
    speed: { min: 0.25, max: 4, step: 0.01, default: 1 },
    maxChars: 100000,
    price: { unitAmount: 99, per: 1000, rounding: "started", minAmount: 0, unitChars: 1000 },
  },
  sst: {
    formats: TRANSCRIPT_FORMATS,
    maxUploadBytes: 26214400,
    maxSeconds: 10800,
    acceptedFormats: ["mp3", "mp4", "mpeg", "mpga", "m4a", "wav", "webm"],
    engine: "whisper",
    languages: STT_LANGUAGES,
    price: { unitAmount: 99, per: 100, rounding: "proportional", minAmount: 99, perSeconds: 100 },
  },
  vtt: {
    formats: TRANSCRIPT_FORMATS,
    maxSeconds: 10800,
    engine: "whisper",
    languages: STT_LANGUAGES,
    price: { unitAmount: 99, per: 60, rounding: "proportional", minAmount: 99, perSeconds: 60 },
  },
};

/** A copy of CONFIG with one service reported closed. */
export function closed(service, reason = "engine_unavailable") {
  return { ...CONFIG, services: { ...CONFIG.services, [service]: { open: false, reason } } };
}

/** A fetch Response carrying JSON. */
export function json(status, body) {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

/**
 * A stand-in for XMLHttpRequest (jsdom sends nothing): the test drives the
 * upload's progress and answer. `FakeXHR.last` is the latest request.
 */
export class FakeXHR {
  static last = null;
  constructor() {
    this.upload = {};
    this.headers = {};
    this.sent = false;
    FakeXHR.last = this;
  }
  open(method, url) {
    this.method = method;
    this.url = url;
  }
  setRequestHeader(k, v) {
    this.headers[k] = v;
  }
  send(body) {
    this.body = body;
    this.sent = true;
  }
  abort() {
    this.onabort?.();
  }
  /** Reports `loaded` of `total` bytes sent. */
  progress(loaded, total) {
    this.upload.onprogress?.({ lengthComputable: true, loaded, total });
  }
  /** Answers with a status and a JSON body (or raw text). */
  respond(status, body) {
    this.status = status;
    this.responseText = typeof body === "string" ? body : JSON.stringify(body);
    this.onload?.();
  }
  /** The connection fails. */
  fail() {
    this.onerror?.();
  }
}
