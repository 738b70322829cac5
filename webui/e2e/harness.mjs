// What the browser tests share: settings from the environment, checks that
// count and go on, waiting, the browser (Debian's chromium through
// playwright-core), screenshots, the language switch, the outbox.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const BASE = (process.env.BASE_URL || "http://127.0.0.1:8080").replace(/\/$/, "");
export const OUTBOX = process.env.OUTBOX_DIR || "";
export const SHOTS = process.env.SCREENSHOT_DIR || "test-artifacts/screenshots";
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const LANGS = ["en", "jp", "es", "ru", "zh", "ar"];
export const EMAIL = "visitor@example.com";
export const started = Date.now();

let passed = 0;
let failed = 0;
/**
 * Content-Security-Policy violations any page of any browser of this journey reported
 * (openBrowser listens); finish() fails the journey when there is one.
 */
export const cspViolations = new Set();

/**
 * Refusals that are a library asking, not the page failing: River's UI (/admin/jobs, its
 * bundled zod) tries `Function("")` once, inside a try, to learn whether it may compile
 * validators, and works without (the area's policy allows no eval).
 */
const CSP_PROBES = [/^Content Security Policy violation: script-src refused eval \(https?:\/\/[^/]+\/admin\/jobs\/assets\/main-[\w-]+\.js:\d+\)$/];
/** Measured values printed at the end. */
export const facts = {};

/** Runs one check; a failure is counted and printed, the journey goes on. */
export async function check(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    passed++;
    console.log(`ok    ${name} (${Date.now() - t0} ms)`);
    return true;
  } catch (err) {
    failed++;
    console.log(`FAIL  ${name}: ${String(err?.message || err).split("\n")[0]}`);
    return false;
  }
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits until fn() returns something truthy. */
export async function until(fn, what, timeoutMs = 15000, everyMs = 250) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ""}`);
}

/** Text of an .eml with quoted-printable and base64 parts decoded, so a link can be searched. */
export function emlText(raw) {
  const qp = raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
  const b64 = [...raw.matchAll(/\r?\n\r?\n([A-Za-z0-9+/=\r\n]{40,})/g)]
    .map((m) => {
      try {
        return Buffer.from(m[1].replace(/\s+/g, ""), "base64").toString("utf8");
      } catch {
        return "";
      }
    })
    .join("\n");
  return `${raw}\n${qp}\n${b64}`;
}

function listEml(dir) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (name.endsWith(".eml")) out.push({ path: p, mtime: st.mtimeMs });
    }
  };
  walk(dir);
  return out;
}

/**
 * Waits for a message written since the run started in OUTBOX_DIR that carries the link
 * page of the download `link` (/d/{token} → /r/{token}: a letter never gives the file
 * itself, so that a mail scanner opening it uses nothing up); returns its path.
 */
export async function emailWithLink(link) {
  assert(OUTBOX, "OUTBOX_DIR not set");
  const download = new URL(link, BASE).pathname;
  const path = download.replace(/^\/d\//, "/r/");
  const found = await until(
    () =>
      listEml(OUTBOX)
        .filter((f) => f.mtime >= started - 1000)
        .find((f) => emlText(readFileSync(f.path, "latin1")).includes(path)),
    `an .eml containing ${path}`,
    60000,
    500,
  );
  assert(!emlText(readFileSync(found.path, "latin1")).includes(download), `the letter gives the download ${download}`);
  return found.path;
}

/** Cents in the config's currency as the page shows them. */
export function moneyOf(config) {
  return (cents, locale = "en") => new Intl.NumberFormat(locale, { style: "currency", currency: config.currency.toUpperCase() }).format(cents / 100);
}

/**
 * Opens chromium with a fresh profile, collecting Content-Security-Policy
 * violations (cspViolations). Returns the page, the uncaught errors
 * and dialogs seen, and helpers: shot(name), setLang(lng), config() (GET
 * /api/config), close().
 */
export async function openBrowser() {
  mkdirSync(SHOTS, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "parla-e2e-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--autoplay-policy=no-user-gesture-required",
    ],
  });
  // Every page reports what its Content-Security-Policy refused: Chromium logs most
  // refusals to the console ("… violates the following Content Security Policy directive"),
  // and the securitypolicyviolation event, logged by this script in every document, names
  // the rest.
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      console.error(`Content Security Policy violation: ${e.effectiveDirective} refused ${e.blockedURI || "an inline script or style"} (${e.sourceFile || location.href}:${e.lineNumber})`),
    );
  });
  context.on("console", (m) => {
    const text = m.text();
    if (text.includes("Content Security Policy") && !CSP_PROBES.some((p) => p.test(text))) cspViolations.add(`${m.page()?.url() ?? "?"}: ${text}`);
  });
  const page = context.pages()[0] || (await context.newPage());
  const pageErrors = [];
  const consoleLines = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("console", (m) => consoleLines.push(m.text()));
  page.on("dialog", (d) => {
    pageErrors.push(`unexpected dialog: ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  return {
    context,
    page,
    pageErrors,
    consoleLines,
    shot: (name) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true }),
    async setLang(lng) {
      await page.getByTestId("language").selectOption(lng);
      await until(() => page.evaluate((l) => localStorage.getItem("lang") === l, lng), `language ${lng}`);
      await page.waitForTimeout(100);
    },
    async config() {
      const res = await page.request.get(`${BASE}/api/config`);
      assert(res.ok(), `GET /api/config: status ${res.status()}`);
      return res.json();
    },
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Prints the facts and "N passed, M failed", and exits non-zero on any failure. */
export function finish() {
  if (cspViolations.size) {
    failed++;
    console.log(`FAIL  no Content-Security-Policy violation on any page: ${[...cspViolations].join(" | ")}`);
  } else {
    passed++;
    console.log("ok    no Content-Security-Policy violation on any page");
  }
  console.log(`facts: ${JSON.stringify(facts)}`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

/** Counts an aborted run as a failure. */
export function abort(err) {
  failed++;
  console.log(`FAIL  aborted: ${err.message}`);
}

/**
 * Checks that the page is laid out right to left: <html dir=rtl>, the main
 * column's direction, and the first step's number badge to the right of its
 * title. Returns what it measured.
 */
export async function assertRtl(page) {
  const m = await page.evaluate(() => {
    const h2 = document.querySelector(".step h2");
    const badge = h2?.querySelector(".step-n")?.getBoundingClientRect();
    const title = h2?.querySelector(".step-n + span")?.getBoundingClientRect();
    return {
      dir: document.documentElement.dir,
      direction: getComputedStyle(document.querySelector("main")).direction,
      badgeLeft: badge?.left,
      titleRight: title?.right,
      scrollWidth: document.documentElement.scrollWidth,
      width: window.innerWidth,
    };
  });
  assert(m.dir === "rtl" && m.direction === "rtl", `not rtl: ${JSON.stringify(m)}`);
  assert(m.badgeLeft >= m.titleRight, `step number not right of its title: ${JSON.stringify(m)}`);
  assert(m.scrollWidth <= m.width, `horizontal overflow: ${m.scrollWidth}px`);
  return m;
}

/** Clicks the download link and returns {buf, name} of the file. */
export async function download(page) {
  const [dl] = await Promise.all([page.waitForEvent("download", { timeout: 30000 }), page.getByTestId("download").click()]);
  return { buf: readFileSync(await dl.path()), name: dl.suggestedFilename() };
}

/**
 * Pays on the built-in test checkout and follows the confirmation page
 * (`successPath`) until the download link; returns the link. The order and
 * the session id must be gone from storage afterwards, the language kept.
 */
export async function payAndConfirm(page, { service, successPath, shot, setLang }) {
  await page.getByTestId("pay").click();
  await page.waitForURL(/\/checkout\/test\//, { timeout: 15000 });
  const stored = await page.evaluate((s) => ({ order: localStorage.getItem(s), session: localStorage.getItem("sessionId") }), service);
  assert(stored.session, "sessionId not stored");
  assert(stored.order, `no '${service}' order in storage`);
  await shot(`en-${service}-checkout`);
  await page.getByRole("button", { name: /^Pay/ }).click();
  await page.waitForURL((u) => u.pathname === successPath, { timeout: 15000 });
  await page.getByText("Payment successful").waitFor({ timeout: 10000 }).catch(() => {});
  facts[`${service}SawProgress`] = (await page.getByTestId("progress").count()) > 0;
  await page.getByTestId("success").waitFor({ timeout: 180000 });
  const link = await page.getByTestId("download").getAttribute("href");
  assert(link, "no link");
  assert(await page.getByText(EMAIL, { exact: false }).isVisible(), "address not shown");
  assert(await page.getByText("transcription file", { exact: false }).isVisible(), "not the transcription wording");
  const after = await page.evaluate((s) => ({ order: localStorage.getItem(s), session: localStorage.getItem("sessionId"), lang: localStorage.getItem("lang") }), service);
  assert(after.order === null && after.session === null, `storage not cleared: ${JSON.stringify(after)}`);
  assert(after.lang === "en", `language choice lost: ${after.lang}`);
  await shot(`en-${service}-success`);
  await setLang("ar");
  await shot(`ar-${service}-success`);
  await setLang("en");
  return link;
}

/**
 * The transcription requests the fake engine (fake-openai.mjs, FAKE_OPENAI_URL)
 * received, or null when the run has no fake engine.
 */
export async function engineRequests() {
  const base = process.env.FAKE_OPENAI_URL;
  if (!base) return null;
  const res = await fetch(`${base.replace(/\/$/, "")}/stats`);
  assert(res.ok, `fake engine stats: ${res.status}`);
  return (await res.json()).requests;
}

/** Checks that at 375 px wide the page needs no horizontal scrolling; screenshots it as `name`. */
export async function assertNarrow(page, shot, name) {
  await page.setViewportSize({ width: 375, height: 800 });
  await page.waitForTimeout(200);
  const w = await page.evaluate(() => document.documentElement.scrollWidth);
  await shot(name);
  await page.setViewportSize({ width: 1280, height: 900 });
  assert(w <= 375, `page is ${w}px wide`);
}

/**
 * The end every transcription journey shares, once the pay button shows:
 * 375 px and Arabic layout checks, payment and confirmation, the download
 * (`file.check(text)` asserts its format), the engine's request, the e-mail,
 * and no page errors. `probed` is the media's length by ffprobe.
 */
export async function transcriptionTail(browser, { service, probed, file }) {
  const { page, shot, setLang, pageErrors } = browser;
  await check(`375 px wide: no horizontal scrolling on /${service}`, async () => {
    await assertNarrow(page, shot, `en-${service}-375px`);
  });

  await check("in Arabic the page is laid out right to left", async () => {
    await setLang("ar");
    facts[`${service}Rtl`] = await assertRtl(page);
    await shot(`ar-${service}-ready`);
    await setLang("en");
  });

  let link = "";
  await check(`pay on the test checkout; /${service}-payment/success shows the link and clears the order`, async () => {
    link = await payAndConfirm(page, { service, successPath: `/${service}-payment/success`, shot, setLang });
  });

  await check(`the download is ${file.kind} with cues of the clip`, async () => {
    const { buf, name } = await download(page);
    facts[`${service}Download`] = { name, bytes: buf.length };
    facts[`${service}Cues`] = file.check(buf.toString("utf8"));
  });

  await check("the engine received the audio of the whole clip", async () => {
    const requests = await engineRequests();
    if (!requests) return console.log("      (no FAKE_OPENAI_URL: not checked)");
    // The media's own length (a video track may run a little past the sound) within half a second.
    const heard = requests.filter((r) => Math.abs(r.seconds - probed) <= 0.5);
    assert(heard.length >= 1, `no request with ~${probed} s of audio: ${JSON.stringify(requests)}`);
    facts[`${service}Engine`] = heard.at(-1);
  });

  await check("the e-mail in OUTBOX_DIR carries the link", async () => {
    facts[`${service}Email`] = await emailWithLink(link);
  });

  await check("no uncaught errors or unexpected dialogs in the page", async () => {
    assert(pageErrors.length === 0, pageErrors.join(" | "));
  });
  return link;
}
