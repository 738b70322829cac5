// The /api page's own checks, as a developer meets it in en, ar and jp at 320 and 1280 px
// (issue 45): the calls table's text, the key page's language after the checkout, a
// cancelled checkout, and a server whose transcription is closed selling none of it (a
// server of its own, started here: whisper pointed at a model that is not there).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assert, BASE, check, EMAIL, until } from "./harness.mjs";

/** The page's languages and widths the checks walk. */
export const LOOKS = ["en", "ar", "jp"].flatMap((lng) => [1280, 320].map((width) => ({ lng, width })));

/** The address prefix of each language (jp's is its code, ja). */
const PREFIX = { en: "", ar: "/ar", jp: "/ja" };

/** A locale's strings. */
const locale = (lng) => JSON.parse(readFileSync(new URL(`../src/locales/${lng}/translation.json`, import.meta.url), "utf8"));

/** Opens `path` in `lng` (its address, the remembered language too) at `width` px. */
async function open(page, base, path, { lng, width }) {
  await page.setViewportSize({ width, height: 900 });
  await page.goto(`${base}/`, { waitUntil: "networkidle" });
  await page.evaluate((l) => localStorage.setItem("lang", l), lng);
  await page.goto(`${base}${PREFIX[lng]}${path}`, { waitUntil: "networkidle" });
}

/** What the page measures of its width and language. */
const layout = (page) =>
  page.evaluate(() => ({
    lang: document.documentElement.lang,
    dir: document.documentElement.dir,
    scroll: document.documentElement.scrollWidth,
    width: window.innerWidth,
    tables: [...document.querySelectorAll(".api-page table")].filter((t) => t.scrollWidth > t.parentElement.clientWidth + 1).length,
  }));

/** Opens /api in `lng` as a visitor who came by its address (no language chosen before) and fills the form. */
async function fillFrom(page, lng) {
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${BASE}/`, { waitUntil: "networkidle" });
  await page.evaluate(() => localStorage.clear());
  await page.goto(`${BASE}${PREFIX[lng]}/api`, { waitUntil: "networkidle" });
  await page.locator("#credit-amount").fill("6");
  await page.locator("#email").fill(EMAIL);
  await page.locator("#email-verify").fill(EMAIL);
  await page.getByTestId("credit-pay").click();
  await page.waitForURL(/\/checkout\/test\//, { timeout: 15000 });
}

/** A checkout cancelled from /api in `lng` comes back to the form as it was typed, in that language, and says so. */
export async function cancelKeepsForm(page, lng, shot) {
  await fillFrom(page, lng);
  await page.locator('form[action$="/cancel"] button').click();
  await page.waitForURL((u) => u.pathname.endsWith("/api"), { timeout: 15000 });
  await page.locator("#credit-amount").waitFor({ timeout: 15000 });
  await page.waitForTimeout(300);
  const kept = await page.evaluate(() => ["credit-amount", "email", "email-verify"].map((id) => document.getElementById(id).value));
  await shot(`${lng}-api-cancelled`);
  assert(kept.join() === `6,${EMAIL},${EMAIL}`, `after the cancel the form holds ${kept}`);
  assert(new URL(page.url()).pathname === `${PREFIX[lng]}/api`, `the cancel came back to ${page.url()}`);
  assert(await page.getByTestId("credit-cancelled").isVisible(), "nothing says the checkout was cancelled");
}

/** Credit paid from /api in `lng`: the key's page is in that language (Arabic right to left). */
export async function keyPageIn(page, lng, shot) {
  await fillFrom(page, lng);
  await page.locator("button.pay").click();
  await page.getByTestId("api-key").waitFor({ timeout: 15000 });
  const m = await layout(page);
  await shot(`${lng}-api-key`);
  const want = { ar: ["ar", "rtl"], jp: ["ja", "ltr"] }[lng];
  assert(m.lang === want[0] && m.dir === want[1], `the key's page is ${m.lang} ${m.dir}, not ${want}`);
  assert(new URL(page.url()).pathname === `${PREFIX[lng]}/api-payment/success`, `the key's page is at ${page.url()}`);
  assert((await page.locator("h1").textContent()).trim() === locale(lng).apiKey.title, "the key's title is not translated");
}

/** The key's calls on /api in each language and width: sizes in words, the table within the page. */
export async function callsTable(page, key, shot) {
  for (const look of LOOKS) {
    await check(`/api's calls table in ${look.lng} at ${look.width} px: sizes in words, no sideways scrolling`, async () => {
      await open(page, BASE, "/api", look);
      await page.locator("#credit-key").fill(key);
      await page.getByTestId("credit-check").click();
      await page.getByTestId("credit-balance").waitFor({ timeout: 10000 });
      const cells = await page.locator("table.calls tbody tr").evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
      const hooks = await page.getByTestId("credit-call").count();
      const text = await page.getByTestId("credit-balance").textContent();
      const m = await layout(page);
      await shot(`${look.lng}-api-calls-${look.width}px`);
      assert(!text.includes("{{"), `a raw placeholder: ${text.slice(text.indexOf("{{") - 20, text.indexOf("{{") + 20)}`);
      assert(cells.every((c) => /\d/.test(c[1]) && /\d/.test(c[2]) || c[2] === locale(look.lng).api.notCharged), `sizes and costs ${JSON.stringify(cells.slice(0, 3))}`);
      assert(m.scroll <= m.width && m.tables === 0, `the page is ${m.scroll} px wide in ${m.width}, ${m.tables} table(s) wider than their box`);
      assert(cells.length >= 10 && hooks === cells.length, `${cells.length} calls, ${hooks} credit-call`);
    });
  }
}

/** A port free now. */
function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Starts the server with its transcription closed (whisper, its model absent); returns its base and stop(). */
async function startClosed() {
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), "parla-e2e-closed-"));
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env, ADDR: `127.0.0.1:${port}`, PUBLIC_URL: base, DATA_DIR: data, RATE_LIMIT: "0", STT_ENGINE: "whisper", WHISPER_MODEL: join(data, "ggml-absent.bin"), ADMIN_PASSWORD: "", ADMIN_PASSWORD_HASH: "" };
  const proc = spawn(process.env.PARLA_BIN || "./bin/parla", [], { env, stdio: "ignore" });
  const stop = () => {
    proc.kill();
    rmSync(data, { recursive: true, force: true });
  };
  try {
    await until(async () => (await fetch(`${base}/healthz`)).ok, "the server without transcription", 60000);
    return { base, stop };
  } catch (err) {
    stop();
    throw err;
  }
}

/**
 * On a server whose transcription is closed, /api in each language and width sells none:
 * no transcription price, sample, model or format; only the notice that it is closed names it.
 */
export async function closedTranscription(page, shot) {
  let server;
  await check("a server started without transcription says so in /api/config", async () => {
    server = await startClosed();
    const config = await (await fetch(`${server.base}/api/config`)).json();
    assert(config.services?.sst?.open === false, `its transcription is open: ${JSON.stringify(config.services)}`);
  });
  if (!server) return;
  try {
    for (const look of LOOKS) {
      await check(`/api in ${look.lng} at ${look.width} px sells no transcription where it is closed`, async () => {
        await open(page, server.base, "/api", look);
        await page.locator(".api-page h1").waitFor({ timeout: 10000 });
        await page.waitForTimeout(300);
        const word = locale(look.lng).api.sample.transcription.toLowerCase();
        const text = await page.locator(".api-page").evaluate((el) => {
          const copy = el.cloneNode(true);
          copy.querySelector('[data-testid="api-stt-closed"]')?.remove();
          return copy.textContent.toLowerCase();
        });
        const samples = await page.locator('[data-testid="api-sample-transcription"]').count();
        const m = await layout(page);
        await shot(`${look.lng}-api-no-stt-${look.width}px`);
        assert(!text.includes(word) && !text.includes("whisper-1") && samples === 0, `transcription sold: "${word}" at ${text.indexOf(word)}, ${samples} sample(s)`);
        assert((await page.getByTestId("api-stt-closed").count()) === 1, "nothing says transcription is closed");
        assert(m.scroll <= m.width, `the page is ${m.scroll} px wide in ${m.width}`);
      });
    }
  } finally {
    server.stop();
  }
}
