// A stand-in for the Go server, for working on the frontend without it and
// for checking the browser test itself: serves dist/ with the SPA fallback
// and fakes the API contract (api/README.md) with the built-in test checkout.
//
//   npm run build && PORT=4100 OUTBOX_DIR=/tmp/outbox node e2e/mock-server.mjs
//
// Not used by the product; the real server is the Go binary.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { CONFIG as FIXTURE_CONFIG } from "../test/fixtures.js";

const DIST = fileURLToPath(new URL("../dist/", import.meta.url));
const PORT = Number(process.env.PORT || 4100);
const OUTBOX = process.env.OUTBOX_DIR || mkdtempSync(join(tmpdir(), "parla-outbox-"));
mkdirSync(OUTBOX, { recursive: true });

function makeMp3() {
  const f = join(mkdtempSync(join(tmpdir(), "parla-mock-")), "a.mp3");
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

// The contract's config, as the unit tests use it, with the mock's own differences: a
// contact address and video-to-text shown open.
const CONFIG = {
  ...FIXTURE_CONFIG,
  contactEmail: "contact@example.com",
  services: { ...FIXTURE_CONFIG.services, vtt: { open: true } },
};

const sessions = new Map(); // id → {order, amount, paid, polls, token}
const files = new Map(); // token → Buffer

const send = (res, status, body, type = "application/json") => {
  res.writeHead(status, { "Content-Type": type });
  res.end(type === "application/json" ? JSON.stringify(body) : body);
};
const fail = (res, status, code, extra = {}) => send(res, status, { ok: false, error: { code, message: code }, ...extra });
const readBody = (req) =>
  new Promise((resolve) => {
    let s = "";
    req.on("data", (c) => (s += c));
    req.on("end", () => resolve(s));
  });

function orderView(s) {
  const progress = !s.paid ? 0 : Math.min(100, s.polls * 34);
  const done = progress >= 100;
  return {
    id: s.id,
    service: "tts",
    status: !s.paid ? "awaiting_payment" : done ? "done" : "processing",
    progress,
    link: done ? `/d/${s.token}` : "",
    expiresAt: "",
    error: "",
  };
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, `http://${req.headers.host}`);
  const p = url.pathname;
  if (req.method === "GET" && p === "/api/config") return send(res, 200, CONFIG);
  if (req.method === "GET" && p.startsWith("/api/tts/samples/")) return send(res, 200, MP3, "audio/mpeg");
  if (req.method === "POST" && p === "/payment/tts/create-checkout-session") {
    let body;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return fail(res, 400, "invalid_json");
    }
    const o = body.order || {};
    if (!o.input) return fail(res, 400, "empty_text");
    if (!o.email || o.email !== o.emailVerify) return fail(res, 400, "email_mismatch");
    const amount = 99 * Math.ceil([...o.input].length / 1000);
    if (body.products && body.products[0]?.price_data?.unit_amount !== amount) return fail(res, 409, "price_mismatch");
    const id = `cs_test_${randomBytes(6).toString("hex")}`;
    sessions.set(id, { id, order: o, amount, paid: false, polls: 0, token: randomBytes(8).toString("hex") });
    return send(res, 200, { ok: true, sessionId: id, url: `/checkout/test/${id}`, amount, currency: "eur" });
  }
  let m = p.match(/^\/checkout\/test\/([\w-]+)(\/pay|\/cancel)?$/);
  if (m) {
    const s = sessions.get(m[1]);
    if (!s) return fail(res, 404, "session_not_found");
    if (req.method === "GET" && !m[2]) {
      return send(
        res,
        200,
        `<!doctype html><title>Test checkout</title><h1>Test checkout</h1><p>Amount: €${(s.amount / 100).toFixed(2)} (TEST)</p>
<form method="post" action="/checkout/test/${s.id}/pay"><button type="submit">Pay €${(s.amount / 100).toFixed(2)}</button></form>
<form method="post" action="/checkout/test/${s.id}/cancel"><button type="submit">Cancel</button></form>`,
        "text/html; charset=utf-8",
      );
    }
    if (req.method === "POST" && m[2] === "/pay") {
      s.paid = true;
      res.writeHead(303, { Location: `/payment/success?session_id=${s.id}` });
      return res.end();
    }
    if (req.method === "POST" && m[2] === "/cancel") {
      res.writeHead(303, { Location: "/tts" });
      return res.end();
    }
  }
  if (req.method === "GET" && p === "/payment/tts/checkout-session") {
    const s = sessions.get(url.searchParams.get("sessionId") || "");
    if (!s) return fail(res, 404, "session_not_found");
    return send(res, 200, { ok: true, email: s.order.email, name: "", payment_intent: "pi_x", status: s.paid ? "complete" : "open", order: orderView(s) });
  }
  if (req.method === "POST" && p === "/services/tts") {
    let id = "";
    try {
      id = JSON.parse(await readBody(req)).sessionId;
    } catch {
      return fail(res, 400, "invalid_json");
    }
    const s = sessions.get(id);
    if (!s) return fail(res, 404, "session_not_found");
    if (!s.paid) return fail(res, 402, "payment_required");
    s.polls++;
    const o = orderView(s);
    if (o.status !== "done") return send(res, 202, { ok: true, order: o });
    if (!files.has(s.token)) {
      files.set(s.token, MP3);
      const link = `http://${req.headers.host}${o.link}`;
      writeFileSync(
        join(OUTBOX, `${s.id}.eml`),
        `To: ${s.order.email}\r\nSubject: Your Parla audio\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nDownload: ${link}\r\n`,
      );
    }
    return send(res, 200, { ok: true, data: { data: o.link }, order: o });
  }
  m = p.match(/^\/d\/(\w+)$/);
  if (m && req.method === "GET") {
    const f = files.get(m[1]);
    if (!f) return fail(res, 404, "not_found");
    res.writeHead(200, { "Content-Type": "audio/mpeg", "Content-Disposition": 'attachment; filename="parla.mp3"' });
    return res.end(f);
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
