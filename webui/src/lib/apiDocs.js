// What the /api page tells a developer of Parla's /v1 API: its models, voices and formats as
// api/v1 takes them, its prices from the server's published rules (GET /api/config), and the
// samples in curl, JavaScript and Python. Pure functions; no price lives here.

/** The model names /v1 takes (api/v1/models.go), per service. */
export const MODELS = {
  tts: ["tts-1", "tts-1-hd", "gpt-4o-mini-tts", "gpt-4o-mini-tts-2025-03-20", "gpt-4o-mini-tts-2025-12-15"],
  sst: [
    "whisper-1",
    "gpt-4o-transcribe",
    "gpt-4o-mini-transcribe",
    "gpt-4o-mini-transcribe-2025-03-20",
    "gpt-4o-mini-transcribe-2025-12-15",
  ],
};

/** The six voices, and OpenAI's newer names read as one of them (api/v1/speech.go voiceMap). */
export const VOICES = ["alloy", "echo", "fable", "onyx", "nova", "shimmer"];
export const NEWER_VOICES = { ash: "onyx", ballad: "fable", cedar: "onyx", coral: "nova", marin: "alloy", sage: "shimmer", verse: "echo" };

/** The response formats of a speech call and of a transcript (api/v1). */
export const SPEECH_FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"];
export const TRANSCRIPT_FORMATS = ["json", "text", "srt", "verbose_json", "vtt"];

/**
 * What a call of `quantity` units costs under `rule` ({unitAmount, per}), in thousandths of
 * a cent, as the API charges it (orders.Rule.MilliAmount): proportional, no minimum, rounded
 * half up to a thousandth; `scale` units make one of the rule's (1000 ms a second). No
 * usable rule prices nothing at 0.
 */
export function milliCents(rule, quantity, scale = 1) {
  const whole = (n) => Number.isSafeInteger(n) && n > 0;
  if (!rule || !whole(rule.unitAmount) || !whole(rule.per) || !(quantity > 0)) return 0;
  const d = BigInt(rule.per) * BigInt(scale);
  return Number((BigInt(rule.unitAmount) * 1000n * BigInt(Math.round(quantity)) + d / 2n) / d);
}

/** The worked examples of the price table: characters spoken, seconds transcribed. */
const EXAMPLES = { tts: [2, 120, 1000, 4096], sst: [30, 600, 3600] };

/**
 * The price table's rows, from GET /api/config's rules: per open service, what each example
 * costs, in cents to the thousandth. Transcription is left out when `sttOpen` is false.
 * @returns {{service: string, quantity: number, cents: number}[]} service: tts or sst
 */
export function priceRows(config, sttOpen) {
  const rows = EXAMPLES.tts.map((q) => ({ service: "tts", quantity: q, cents: milliCents(config?.tts?.price, q) / 1000 }));
  if (!sttOpen) return rows;
  return rows.concat(EXAMPLES.sst.map((q) => ({ service: "sst", quantity: q, cents: milliCents(config?.sst?.price, q * 1000, 1000) / 1000 })));
}

/** The line every shell sample starts with: the key in the environment, exported for curl. */
const EXPORT = 'export PARLA_API_KEY="sk-parla-…"   # your key';
const AUTH = '-H "Authorization: Bearer $PARLA_API_KEY"';
const JS_CLIENT = (base) =>
  `import fs from "node:fs";\nimport OpenAI from "openai"; // npm install openai\n\nconst client = new OpenAI({ apiKey: process.env.PARLA_API_KEY, baseURL: "${base}" });\n`;
const PY_CLIENT = (base) =>
  `import os\nfrom openai import OpenAI  # pip install openai\n\nclient = OpenAI(api_key=os.environ["PARLA_API_KEY"], base_url="${base}")\n`;

/**
 * The copyable samples, per task and language, against `base` (this server's /v1): speech,
 * transcription (only when `sttOpen`), and the balance (GET /v1/credit, which OpenAI's
 * SDKs do not know: a plain request).
 * @returns {{task: string, code: {curl: string, js: string, python: string}}[]}
 */
export function samples(base, sttOpen) {
  const speech = {
    task: "speech",
    code: {
      curl: `${EXPORT}\ncurl ${base}/audio/speech \\\n  ${AUTH} \\\n  -H "Content-Type: application/json" \\\n  -d '{"model":"tts-1","input":"Hello from Parla","voice":"alloy"}' \\\n  -o hello.mp3`,
      js: `${JS_CLIENT(base)}const speech = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "Hello from Parla" });\nfs.writeFileSync("hello.mp3", Buffer.from(await speech.arrayBuffer()));`,
      python: `${PY_CLIENT(base)}with client.audio.speech.with_streaming_response.create(\n    model="tts-1", voice="alloy", input="Hello from Parla"\n) as speech:\n    speech.stream_to_file("hello.mp3")`,
    },
  };
  const transcription = {
    task: "transcription",
    code: {
      curl: `${EXPORT}\ncurl ${base}/audio/transcriptions \\\n  ${AUTH} \\\n  -F model=whisper-1 -F response_format=srt -F file=@talk.mp3`,
      js: `${JS_CLIENT(base)}const transcript = await client.audio.transcriptions.create({ model: "whisper-1", file: fs.createReadStream("talk.mp3") });\nconsole.log(transcript.text);`,
      python: `${PY_CLIENT(base)}with open("talk.mp3", "rb") as f:\n    transcript = client.audio.transcriptions.create(model="whisper-1", file=f)\nprint(transcript.text)`,
    },
  };
  const balance = {
    task: "balance",
    code: {
      curl: `${EXPORT}\ncurl ${base}/credit ${AUTH}`,
      js: `const res = await fetch("${base}/credit", { headers: { Authorization: \`Bearer \${process.env.PARLA_API_KEY}\` } });\nconst credit = await res.json();\nconsole.log(credit.balance, credit.currency, new Date(credit.expires_at * 1000));`,
      python: `import os\nimport httpx  # installed with openai\n\nres = httpx.get("${base}/credit", headers={"Authorization": f"Bearer {os.environ['PARLA_API_KEY']}"})\ncredit = res.json()\nprint(credit["balance"], credit["currency"], credit["expires_at"])`,
    },
  };
  return sttOpen ? [speech, transcription, balance] : [speech, balance];
}
