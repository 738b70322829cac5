// A stand-in for the Go server, for working on the frontend without it and
// for checking the browser tests themselves: serves dist/ with the SPA
// fallback and fakes the API contract (api/README.md) of the three services
// with the built-in test checkout.
//
//   npm run build && PORT=4100 OUTBOX_DIR=/tmp/outbox node e2e/mock-server.mjs
//
// Uploads and links are measured with ffprobe; the "transcript" is the test
// clips' sentence spread over that duration. Not used by the product.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { countChars, priceCents } from "../src/lib/pricing.js";
import { CONFIG as FIXTURE_CONFIG } from "../test/fixtures.js";
import { CLIP_TEXT, hasAudio, parseMultipart, probeSeconds, readBody, renderTranscript, tempDir } from "./media.mjs";

const DIST = fileURLToPath(new URL("../dist/", import.meta.url));
const PORT = Number(process.env.PORT || 4100);
const OUTBOX = process.env.OUTBOX_DIR || tempDir("parla-outbox-");
const WORK = tempDir("parla-mock-");
mkdirSync(OUTBOX, { recursive: true });

function makeMp3() {
  const f = join(WORK, "a.mp3");
  try {
    execFileSync("ffmpeg", ["-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-q:a", "9", f]);
    return readFileSync(f);
  } catch {
    const frame = Buffer.alloc(417);
    frame.set([0xff, 0xfb, 0x90, 0x64]);
    return Buffer.concat(Array(40).fill(frame));
  }
}
const MP3 = makeMp3();

// The contract's config, as the unit tests use it, with the mock's own differences.
const CONFIG = {
  ...FIXTURE_CONFIG,
  contactEmail: "contact@example.com",
  sst: { ...FIXTURE_CONFIG.sst, engine: "openai" },
  vtt: { ...FIXTURE_CONFIG.vtt, engine: "openai" },
};
const SUCCESS = { tts: "/payment/success", sst: "/sst-payment/success", vtt: "/vtt-payment/success" };
const FILE_TYPES = { json: "application/json", verbose_json: "application/json", text: "text/plain", srt: "application/x-subrip", vtt: "text/vtt" };

const sessions = new Map(); // id → {id, service, order, amount, paid, polls, token, seconds}
const uploads = new Map(); // upload id → {name, seconds}
const files = new Map(); // token → {body, type, name}

const send = (res, status, body, type = "application/json") => {
  res.writeHead(status, { "Content-Type": type });
  res.end(type === "application/json" ? JSON.stringify(body) : body);
};
const fail = (res, status, code, extra = {}) => send(res, status, { ok: false, error: { code, message: code }, ...extra });
const readJSON = async (req) => {
  try {
    return JSON.parse((await readBody(req)).toString("utf8"));
  } catch {
    return null;
  }
};

function orderView(s) {
  const progress = !s.paid ? 0 : Math.min(100, s.polls * 34);
  const done = progress >= 100;
  return {
    id: s.id,
    service: s.service,
    status: !s.paid ? "awaiting_payment" : done ? "done" : "processing",
    progress,
    link: done ? `/d/${s.token}` : "",
    expiresAt: "",
    error: "",
  };
}

/** The price and facts of an order, or [status, code] of its refusal. */
function quote(service, o) {
  if (!o.email || o.email !== o.emailVerify) return [400, "email_mismatch"];
  if (service === "tts") {
    if (!o.input) return [400, "empty_text"];
    return { amount: priceCents(countChars(o.input), CONFIG.tts.price) };
  }
  const format = service === "sst" ? o.response_format : o.outputFormat;
  if (format && !CONFIG[service].formats.includes(format)) return [400, "invalid_format"];
  if (o.language && !CONFIG[service].languages.includes(o.language)) return [400, "invalid_language"];
  if (service === "sst") {
    const up = uploads.get(o.filePath || "");
    if (!up) return [404, "upload_not_found"];
    return { amount: priceCents(up.seconds, CONFIG.sst.price), seconds: up.seconds, format };
  }
  const seconds = probeSeconds(o.selectedFile || "");
  if (!seconds) return [422, "not_media"];
  return { amount: priceCents(Math.ceil(seconds), CONFIG.vtt.price), seconds: Math.ceil(seconds), format };
}

async function createSession(req, res, service) {
  const body = await readJSON(req);
  if (!body) return fail(res, 400, "invalid_json");
  const o = body.order || {};
  const q = quote(service, o);
  if (Array.isArray(q)) return fail(res, ...q);
  if (body.products && body.products[0]?.price_data?.unit_amount !== q.amount) return fail(res, 409, "price_mismatch");
  const id = `cs_test_${randomBytes(6).toString("hex")}`;
  sessions.set(id, { id, service, order: o, ...q, paid: false, polls: 0, token: randomBytes(8).toString("hex") });
  return send(res, 200, { ok: true, sessionId: id, url: `/checkout/test/${id}`, amount: q.amount, currency: "eur" });
}

async function uploadAudio(req, res) {
  const body = await readBody(req, CONFIG.sst.maxUploadBytes + 64 * 1024);
  if (!body) return fail(res, 413, "file_too_large");
  const form = parseMultipart(body, req.headers["content-type"]);
  if (!form) return fail(res, 400, "invalid_upload");
  const file = form.files.file;
  if (!file) return fail(res, 400, "no_file");
  if (file.count > 1) return fail(res, 400, "too_many_files");
  if (file.data.length === 0) return fail(res, 400, "empty_file");
  if (file.data.length > CONFIG.sst.maxUploadBytes) return fail(res, 413, "file_too_large");
  const id = `up_${randomBytes(8).toString("hex")}`;
  const path = join(WORK, id);
  writeFileSync(path, file.data);
  const raw = probeSeconds(path);
  if (!raw) return fail(res, 422, "unreadable_audio");
  if (!hasAudio(path)) return fail(res, 422, "not_audio");
  const seconds = Math.ceil(raw);
  uploads.set(id, { name: file.filename, seconds });
  return send(res, 200, { ok: true, file: { filename: file.filename, path: id }, duration: seconds, amount: priceCents(seconds, CONFIG.sst.price), currency: "eur" });
}

async function analyzeVideo(req, res) {
  const body = await readJSON(req);
  if (!body) return fail(res, 400, "invalid_json");
  const video = String(body.video || "").trim();
  if (!video) return fail(res, 400, "empty_link");
  if (!/^https?:\/\//i.test(video)) return fail(res, 400, "unsupported_link");
  const raw = probeSeconds(video);
  if (!raw) return fail(res, 422, "not_media");
  const s = Math.ceil(raw);
  if (s > CONFIG.vtt.maxSeconds) return fail(res, 422, "video_too_long");
  return send(res, 200, {
    ok: true, durationMinutes: Math.floor(s / 60), durationSeconds: s % 60, totalMinutes: s / 60, duration: s,
    amount: priceCents(s, CONFIG.vtt.price), currency: "eur",
  });
}

/** The finished file of a session, and its e-mail in the outbox. */
function deliver(s, host, link) {
  if (files.has(s.token)) return;
  if (s.service === "tts") files.set(s.token, { body: MP3, type: "audio/mpeg", name: "parla.mp3" });
  else {
    const format = s.format || "json";
    const ext = { verbose_json: "json", text: "txt" }[format] || format;
    files.set(s.token, { body: renderTranscript(format, CLIP_TEXT, s.seconds).body, type: FILE_TYPES[format], name: `parla.${ext}` });
  }
  writeFileSync(
    join(OUTBOX, `${s.id}.eml`),
    `To: ${s.order.email}\r\nSubject: Your Parla file\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nDownload: http://${host}${link}\r\n`,
  );
}

async function result(req, res, service) {
  const body = await readJSON(req);
  if (!body) return fail(res, 400, "invalid_json");
  const s = sessions.get(body.sessionId || "");
  if (!s) return fail(res, 404, "session_not_found");
  if (s.service !== service) return fail(res, 404, "wrong_service");
  if (!s.paid) return fail(res, 402, "payment_required");
  s.polls++;
  const o = orderView(s);
  if (o.status !== "done") return send(res, 202, { ok: true, order: o });
  deliver(s, req.headers.host, o.link);
  return send(res, 200, { ok: true, data: { data: o.link }, order: o });
}

function testCheckout(req, res, id, action) {
  const s = sessions.get(id);
  if (!s) return fail(res, 404, "session_not_found");
  const price = `€${(s.amount / 100).toFixed(2)}`;
  if (req.method === "GET" && !action) {
    return send(
      res,
      200,
      `<!doctype html><title>Test checkout</title><h1>Test checkout</h1><p>Amount: ${price} (TEST)</p>
<form method="post" action="/checkout/test/${s.id}/pay"><button type="submit">Pay ${price}</button></form>
<form method="post" action="/checkout/test/${s.id}/cancel"><button type="submit">Cancel</button></form>`,
      "text/html; charset=utf-8",
    );
  }
  if (req.method !== "POST") return fail(res, 404, "not_found");
  if (action === "/pay") s.paid = true;
  res.writeHead(303, { Location: action === "/pay" ? `${SUCCESS[s.service]}?session_id=${s.id}` : `/${s.service}` });
  return res.end();
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, `http://${req.headers.host}`);
  const p = url.pathname;
  if (req.method === "GET" && p === "/api/config") return send(res, 200, CONFIG);
  if (req.method === "GET" && p.startsWith("/api/tts/samples/")) return send(res, 200, MP3, "audio/mpeg");
  if (req.method === "POST" && p === "/services/sst/uploadaudio") return uploadAudio(req, res);
  if (req.method === "POST" && p === "/services/vtt/analyzevideo") return analyzeVideo(req, res);
  let m = p.match(/^\/payment\/(tts|sst|vtt)\/create-checkout-session$/);
  if (m && req.method === "POST") return createSession(req, res, m[1]);
  m = p.match(/^\/checkout\/test\/([\w-]+)(\/pay|\/cancel)?$/);
  if (m) return testCheckout(req, res, m[1], m[2]);
  m = p.match(/^\/payment\/(tts|sst|vtt)\/checkout-session$/);
  if (m && req.method === "GET") {
    const s = sessions.get(url.searchParams.get("sessionId") || "");
    if (!s) return fail(res, 404, "session_not_found");
    if (s.service !== m[1]) return fail(res, 404, "wrong_service");
    return send(res, 200, { ok: true, email: s.order.email, name: "", payment_intent: "pi_x", status: s.paid ? "complete" : "open", order: orderView(s) });
  }
  m = p.match(/^\/services\/(tts|sst|vtt)$/);
  if (m && req.method === "POST") return result(req, res, m[1]);
  m = p.match(/^\/d\/(\w+)$/);
  if (m && req.method === "GET") {
    const f = files.get(m[1]);
    if (!f) return fail(res, 404, "not_found");
    res.writeHead(200, { "Content-Type": f.type, "Content-Disposition": `attachment; filename="${f.name}"` });
    return res.end(f.body);
  }
  if (/^\/(api|services|webhooks)\//.test(p) || (p.startsWith("/payment/") && req.method !== "GET")) return fail(res, 404, "not_found");
  // Static files, then the SPA fallback.
  const file = normalize(join(DIST, p));
  if (file.startsWith(DIST) && existsSync(file) && extname(file)) {
    const types = { ".js": "text/javascript", ".css": "text/css", ".html": "text/html", ".svg": "image/svg+xml" };
    return send(res, 200, readFileSync(file), types[extname(file)] || "application/octet-stream");
  }
  return send(res, 200, readFileSync(join(DIST, "index.html")), "text/html; charset=utf-8");
});

server.listen(PORT, "127.0.0.1", () => console.log(`mock Parla on http://127.0.0.1:${PORT}, outbox ${OUTBOX}`));
