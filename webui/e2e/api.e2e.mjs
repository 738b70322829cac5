// Parla from code (issue 39), walked as a developer would: credit bought on /api in
// Chromium through the test checkout, the key shown once with a copy button, then the
// official OpenAI JS SDK (openai 6.x, from npm) against the same server: models listed,
// speech in every format, transcripts in every format (the file streamed, as the SDK
// sends it), a wrong key refused, and the balance exhausted by concurrent calls; back on
// /api, the key's balance and calls. Arabic reads right to left. Then the page as a developer
// meets it (apipage.mjs): the calls table in en, ar and jp at 320 and 1280 px, buyers from
// /ar/api and /jp/api (a cancelled checkout first) whose key page keeps their language, and
// a server without transcription that sells none.
import { mkdtempSync, readFileSync, writeFileSync, createReadStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { callsTable, cancelKeepsForm, closedTranscription, keyPageIn } from "./apipage.mjs";
import { abort, assert, assertRtl, BASE, check, EMAIL, facts, finish, openBrowser } from "./harness.mjs";

/** The key's balance in cents (GET /v1/credit). */
async function balance(key) {
  const res = await fetch(`${BASE}/v1/credit`, { headers: { Authorization: `Bearer ${key}` } });
  assert(res.ok, `GET /v1/credit: ${res.status}`);
  return (await res.json()).balance;
}

const MAGIC = {
  mp3: (b) => b.subarray(0, 3).toString() === "ID3" || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0),
  opus: (b) => b.subarray(0, 4).toString() === "OggS",
  aac: (b) => b[0] === 0xff && (b[1] & 0xf6) === 0xf0, // ADTS, as OpenAI sends it
  flac: (b) => b.subarray(0, 4).toString() === "fLaC",
  wav: (b) => b.subarray(0, 4).toString() === "RIFF" && b.subarray(8, 12).toString() === "WAVE",
  pcm: (b) => b.length > 4800 && b.length % 2 === 0,
};

async function buyKey(page, shot) {
  await page.goto(`${BASE}/api`, { waitUntil: "networkidle" });
  assert(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API" }).isVisible(), "no API in the menu");
  await page.getByLabel("Amount in euros").fill("5");
  await page.getByLabel("E-mail", { exact: true }).fill(EMAIL);
  await page.getByLabel("Verify e-mail").fill(EMAIL);
  await shot("en-api");
  await page.getByTestId("credit-pay").click();
  await page.waitForURL(/\/checkout\/test\//, { timeout: 15000 });
  await page.getByRole("button", { name: /^Pay/ }).click();
  await page.waitForURL((u) => u.pathname === "/api-payment/success", { timeout: 15000 });
  await page.getByTestId("api-key").waitFor({ timeout: 15000 });
  const key = (await page.getByTestId("api-key").textContent()).trim();
  assert(/^sk-parla-[0-9A-Za-z]{32,}$/.test(key), `key ${key}`);
  await page.getByTestId("copy-key").click();
  assert((await page.evaluate(() => navigator.clipboard.readText())) === key, "the copy button did not copy the key");
  await shot("en-api-key");
  await page.reload({ waitUntil: "networkidle" });
  await page.getByTestId("api-key").waitFor({ timeout: 15000 });
  const masked = (await page.getByTestId("api-key").textContent()).trim();
  assert(masked === `sk-parla-…${key.slice(-4)}`, `after a reload the key shows as ${masked}`);
  return key;
}

async function sdkJourney(key) {
  const client = new OpenAI({ apiKey: key, baseURL: `${BASE}/v1`, maxRetries: 0 });
  await check("the SDK lists tts-1 and whisper-1", async () => {
    const ids = [];
    for await (const m of client.models.list()) ids.push(m.id);
    assert(ids.includes("tts-1") && ids.includes("whisper-1"), `models ${ids}`);
  });
  await check("a wrong key is 401 invalid_api_key", async () => {
    const wrong = new OpenAI({ apiKey: `sk-parla-${"x".repeat(43)}`, baseURL: `${BASE}/v1`, maxRetries: 0 });
    const err = await wrong.models.list().then(() => null, (e) => e);
    assert(err instanceof OpenAI.AuthenticationError && err.code === "invalid_api_key", `got ${err}`);
  });
  await check("120 characters of tts-1 are a valid mp3 and cost 11.88 cents", async () => {
    const before = await balance(key);
    const res = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "Parla speaks. ".repeat(9).slice(0, 120) });
    const buf = Buffer.from(await res.arrayBuffer());
    assert(MAGIC.mp3(buf) && res.headers.get("content-type") === "audio/mpeg", "not an mp3");
    const cost = before - (await balance(key));
    facts.cost120 = cost;
    assert(Math.abs(cost - 11.88) <= 0.01, `cost ${cost}`);
  });
  await check("speech in every format", async () => {
    for (const format of Object.keys(MAGIC)) {
      const res = await client.audio.speech.create({ model: "gpt-4o-mini-tts", voice: "coral", input: "Every format.", response_format: format });
      const buf = Buffer.from(await res.arrayBuffer());
      assert(MAGIC[format](buf), `${format}: ${buf.length} bytes, ${buf.subarray(0, 12).toString("hex")}`);
    }
  });
  const dir = mkdtempSync(join(tmpdir(), "parla-api-"));
  const clip = join(dir, "clip.mp4");
  writeFileSync(clip, Buffer.from(await (await fetch(process.env.MEDIA_URL)).arrayBuffer()));
  await check("transcripts in every format, the file streamed", async () => {
    for (const format of ["json", "text", "srt", "verbose_json", "vtt"]) {
      const out = await client.audio.transcriptions.create({ model: "whisper-1", file: createReadStream(clip), response_format: format });
      const text = typeof out === "string" ? out : JSON.stringify(out);
      assert(text.length > 0 && (format !== "srt" || text.includes(" --> ")) && (format !== "vtt" || text.startsWith("WEBVTT")), `${format}: ${text.slice(0, 200)}`);
    }
  });
  await afterOpenAI(client, key, clip);
  await check("four 4,096-character calls at once: only what the balance covers, the rest 429 insufficient_quota", async () => {
    const left = await balance(key);
    const price = 405.504;
    const long = "Four thousand characters of speech, spoken at once. ".repeat(80).slice(0, 4096);
    const results = await Promise.all(
      [0, 1, 2, 3].map(() =>
        client.audio.speech.create({ model: "tts-1", voice: "nova", input: long, response_format: "opus" }).then(
          async (r) => (await r.arrayBuffer(), "ok"),
          (e) =>
            e instanceof OpenAI.RateLimitError && e.code === "insufficient_quota" && e.headers?.get("x-should-retry") === "false"
              ? "quota"
              : `${e} (x-should-retry ${e.headers?.get?.("x-should-retry")})`,
        ),
      ),
    );
    const ok = results.filter((r) => r === "ok").length;
    const after = await balance(key);
    facts.exhaust = { left, ok, after, results };
    assert(ok === Math.min(4, Math.floor(left / price)) && results.every((r) => r === "ok" || r === "quota"), `results ${results}`);
    assert(after >= 0 && Math.abs(after - (left - ok * price)) < 0.001, `balance ${after}`);
  });
}

/** A WAV of seconds of silence (16 kHz mono, 16-bit). */
function silentWav(seconds) {
  const data = seconds * 16000 * 2;
  const b = Buffer.alloc(44 + data);
  b.write("RIFF", 0);
  b.writeUInt32LE(36 + data, 4);
  b.write("WAVEfmt ", 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(16000, 24);
  b.writeUInt32LE(32000, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write("data", 36);
  b.writeUInt32LE(data, 40);
  return b;
}

/** The server-sent events of a response, parsed. */
async function events(res) {
  const text = await res.text();
  return text
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)));
}

// What code written for OpenAI's audio endpoints sends beyond the basics (issue 45), through
// the SDK: a model by id, dated model names, usage, a streamed transcription, speech as
// server-sent events, and silence answered empty at no cost.
async function afterOpenAI(client, key, clip) {
  await check("models.retrieve: whisper-1 is a model, gpt-9 is 404 model_not_found", async () => {
    const m = await client.models.retrieve("whisper-1");
    assert(m.id === "whisper-1" && m.object === "model", `retrieve ${JSON.stringify(m)}`);
    const err = await client.models.retrieve("gpt-9").then(() => null, (e) => e);
    assert(err instanceof OpenAI.NotFoundError && err.code === "model_not_found", `gpt-9: ${err}`);
  });
  await check("dated model names are taken, and json and verbose_json carry usage", async () => {
    const res = await client.audio.speech.create({ model: "gpt-4o-mini-tts-2025-12-15", voice: "alloy", input: "Pinned." });
    assert(MAGIC.mp3(Buffer.from(await res.arrayBuffer())), "a pinned speech model's answer is no mp3");
    const json = await client.audio.transcriptions.create({ model: "gpt-4o-mini-transcribe-2025-12-15", file: createReadStream(clip) });
    assert(json.usage?.type === "duration" && json.usage.seconds > 0, `json: ${JSON.stringify(json)}`);
    const verbose = await client.audio.transcriptions.create({
      model: "whisper-1", file: createReadStream(clip), response_format: "verbose_json", timestamp_granularities: ["word"],
    });
    assert(Array.isArray(verbose.words) && verbose.usage?.seconds > 0, `verbose_json: ${JSON.stringify(verbose).slice(0, 300)}`);
  });
  await check("stream: true yields transcript.text.delta events, then transcript.text.done with the text and usage", async () => {
    const stream = await client.audio.transcriptions.create({ model: "whisper-1", file: createReadStream(clip), stream: true });
    const types = [];
    let done = null;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === "transcript.text.done") done = ev;
    }
    assert(types.filter((t) => t === "transcript.text.delta").length >= 1 && types.at(-1) === "transcript.text.done", `events ${types}`);
    assert(done.text.length > 0 && done.usage?.seconds > 0, `done ${JSON.stringify(done)}`);
  });
  await check('stream_format "sse" speech yields speech.audio.delta events of an mp3, then speech.audio.done', async () => {
    const res = await client.audio.speech.create({ model: "gpt-4o-mini-tts", voice: "nova", input: "Streamed as events.", stream_format: "sse" });
    const evs = await events(res);
    const audio = Buffer.concat(evs.filter((e) => e.type === "speech.audio.delta").map((e) => Buffer.from(e.audio, "base64")));
    assert(evs.length >= 2 && evs.at(-1).type === "speech.audio.done" && MAGIC.mp3(audio), `events ${evs.map((e) => e.type)}, ${audio.length} bytes`);
  });
  await check("3 s of silence: 200 with an empty text, nothing charged", async () => {
    const before = await balance(key);
    const out = await client.audio.transcriptions.create({ model: "whisper-1", file: await toFile(silentWav(3), "silence.wav", { type: "audio/wav" }) });
    const after = await balance(key);
    assert(out.text === "" && after === before, `text ${JSON.stringify(out.text)}, cost ${before - after}`);
  });
}

async function main() {
  const { context, page, pageErrors, shot, setLang, close } = await openBrowser();
  try {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE });
    await page.goto(`${BASE}/`, { waitUntil: "networkidle" });
    await page.evaluate(() => localStorage.setItem("lang", "en"));
    let key = "";
    await check("credit bought on /api through the test checkout; the key shown once, copied", async () => {
      key = await buyKey(page, shot);
    });
    if (key) await sdkJourney(key);
    await check("/api shows the key's balance and its calls", async () => {
      await page.goto(`${BASE}/api`, { waitUntil: "networkidle" });
      await page.getByLabel("API key").fill(key);
      await page.getByTestId("credit-check").click();
      await page.getByTestId("credit-balance").waitFor({ timeout: 10000 });
      const rows = await page.locator("table.calls tbody tr").count();
      assert(rows >= 10, `${rows} calls listed`);
      await shot("en-api-balance");
    });
    await check("/api in Arabic reads right to left", async () => {
      await setLang("ar");
      await assertRtl(page);
      await shot("ar-api");
      await setLang("en");
    });
    if (key) await callsTable(page, key, shot);
    for (const lng of ["ar", "jp"]) {
      await check(`a checkout cancelled from /api in ${lng} comes back to the form as typed, and says so`, () => cancelKeepsForm(page, lng, shot));
      await check(`a buyer who came by /api in ${lng} gets the key's page in ${lng}`, () => keyPageIn(page, lng, shot));
    }
    await closedTranscription(page, shot);
    await check("no page error", async () => assert(pageErrors.length === 0, pageErrors.join(" | ")));
  } catch (err) {
    abort(err);
  } finally {
    await close();
  }
  finish();
}

main();
