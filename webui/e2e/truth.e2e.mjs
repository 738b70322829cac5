// Browser test of issue 36, item 5: pages that say only what is true, in English and Arabic
// (the About page in all six languages): /sst states its longest recording from the server's
// config; a text of white space alone (the server's empty_text) shows no price and no Pay
// button on /tts, and says why; the About page's deletion sentence says what /privacy says;
// a video link without a scheme gets the app's own translated refusal, not the browser's
// tooltip; and the Vite dev server forwards the API to the Go server's default port.
//
//   BASE_URL=http://127.0.0.1:8080 node webui/e2e/truth.e2e.mjs
//
// Prints one line per check and a final "N passed, M failed"; exits non-zero on any failure.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { abort, assert, BASE, check, EMAIL, facts, finish, openBrowser, until } from "./harness.mjs";

const WEBUI = new URL("..", import.meta.url);
const LANGUAGES = JSON.parse(readFileSync(new URL("src/languages.json", WEBUI), "utf8"));
const STRINGS = Object.fromEntries(LANGUAGES.map(({ id }) => [id, JSON.parse(readFileSync(new URL(`src/locales/${id}/translation.json`, WEBUI), "utf8"))]));
/** The address of path in a language: English unprefixed, the others under /<hreflang>. */
const localized = (id, path) => {
  const { hreflang } = LANGUAGES.find((l) => l.id === id);
  return hreflang === "en" ? path : `/${hreflang}${path === "/" ? "" : path}`;
};
const lookup = (id, key) => key.split(".").reduce((o, k) => o?.[k], STRINGS[id]);
/** A locale string with its {{placeholders}} filled. */
const fill = (id, key, vars = {}) => lookup(id, key).replace(/\{\{\s*(\w+)\s*\}\}/g, (_, v) => String(vars[v]));
/** Text with every kind of space as one plain space (Intl writes narrow no-break spaces). */
const plain = (s) => String(s).replace(/\s+/g, " ").trim();

/** Opens the page at path in language id and waits until the app speaks it. */
async function open(page, id, path) {
  const { tag } = LANGUAGES.find((l) => l.id === id);
  await page.goto(`${BASE}${localized(id, path)}`, { waitUntil: "networkidle" });
  await until(() => page.evaluate((t) => document.documentElement.lang === t, tag), `<html lang=${tag}>`);
}

/** A port free now on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function main() {
  const b = await openBrowser();
  const { page, shot, pageErrors } = b;
  try {
    const config = await b.config();

    for (const id of ["en", "ar"]) {
      await check(`${id}: /sst states the longest recording the server takes, from its config`, async () => {
        const max = config.sst?.maxSeconds;
        assert(Number.isInteger(max) && max > 0, `/api/config sst.maxSeconds = ${max}`);
        await open(page, id, "/sst");
        const { tag } = LANGUAGES.find((l) => l.id === id);
        // The limit in its largest whole unit, as the browser's Intl writes it in the page's language.
        const duration = await page.evaluate(
          ([s, t]) => {
            const [n, unit] = s % 3600 === 0 ? [s / 3600, "hour"] : s % 60 === 0 ? [s / 60, "minute"] : [s, "second"];
            return new Intl.NumberFormat(t, { style: "unit", unit, unitDisplay: "short" }).format(n);
          },
          [max, tag],
        );
        const want = plain(fill(id, "sst.maxDuration", { duration }));
        const limits = plain(await page.locator("#audio-limits").textContent());
        facts[`${id}SstMaxDuration`] = want;
        assert(limits.includes(want), `#audio-limits says "${limits}", want "${want}"`);
        await shot(`${id}-sst-max-duration`);
      });
    }

    await check("the server refuses a text of white space or punctuation alone as empty_text, and takes a word", async () => {
      const quote = (text) => page.request.post(`${BASE}/api/tts/quote`, { data: { text, locale: "en" } });
      const blank = await quote(" \n\t\u3000 ");
      assert(blank.status() === 400 && (await blank.json()).error?.code === "empty_text", `blank: ${blank.status()} ${await blank.text()}`);
      const dots = await quote(" ... ");
      assert(dots.status() === 400 && (await dots.json()).error?.code === "empty_text", `punctuation: ${dots.status()} ${await dots.text()}`);
      const word = await quote(" ...a ");
      assert(word.ok(), `a word: ${word.status()} ${await word.text()}`);
    });

    for (const id of ["en", "ar"]) {
      await check(`${id}: /tts shows no price and no Pay button for a text of spaces, and says why`, async () => {
        await open(page, id, "/tts");
        await page.locator("#email").fill(EMAIL);
        await page.locator("#email-verify").fill(EMAIL);
        const text = page.locator("#tts-text");
        // A real text first: the price and the button show, so their absence below means something.
        await text.fill("Hello.");
        await page.getByTestId("pay").waitFor({ timeout: 10000 });
        assert((await page.getByTestId("cost").count()) === 1, "no price for a real text");
        await text.fill("     \n   ");
        await page.getByTestId("blank-text").waitFor({ timeout: 10000 });
        assert((await page.getByTestId("cost").count()) === 0, "a price for spaces");
        assert((await page.getByTestId("pay").count()) === 0, "a Pay button for spaces");
        const said = plain(await page.getByTestId("blank-text").textContent());
        assert(said === plain(lookup(id, "tts.blankText")), `reason: "${said}"`);
        await shot(`${id}-tts-blank-text`);
        await text.fill("");
      });
    }

    for (const { id } of LANGUAGES) {
      await check(`${id}: the About page's deletion sentence says what /privacy says`, async () => {
        const days = config.retention?.linkDays ?? config.linkDays;
        assert(Number.isInteger(days) && days > 0, `linkDays ${days}`);
        await open(page, id, "/privacy");
        const items = (await page.getByTestId("retention").locator("li").allTextContents()).map(plain);
        const result = items.find((s) => s.includes(String(days)));
        assert(result, `no retention item with ${days}: ${items.join(" | ")}`);
        // "10 days", "10 أيام", "10 日間保存し": the number and the word after it on /privacy.
        const phrase = result.match(new RegExp(`${days}\\s*[^\\s,，;；、。:：]+`))[0];
        await open(page, id, "/");
        const card = page.locator(".points li").filter({ has: page.getByRole("heading", { name: lookup(id, "about.points.privacy.title"), exact: true }) });
        const said = plain(await card.locator("p").textContent());
        facts[`${id}AboutPrivacy`] = said;
        assert(said.includes(phrase), `About says "${said}", /privacy says "${result}" ("${phrase}")`);
        if (id === "ar" || id === "en") await shot(`${id}-about-privacy`);
      });
    }

    for (const id of ["en", "ar"]) {
      await check(`${id}: a video link without https:// gets the app's translated unsupported_link, not the browser's tooltip`, async () => {
        await open(page, id, "/vtt");
        const field = page.locator("#video-link");
        await field.fill("example.com/video.mp4");
        const answer = page.waitForResponse((r) => r.url().endsWith("/services/vtt/analyzevideo"), { timeout: 15000 });
        await page.getByTestId("analyze").click();
        const res = await answer; // the browser let the form go: the app checked the link
        assert(res.status() === 400, `analyzevideo: ${res.status()}`);
        const error = page.getByTestId("error");
        await error.waitFor({ timeout: 15000 });
        assert((await error.getAttribute("data-code")) === "unsupported_link", `code ${await error.getAttribute("data-code")}`);
        const said = plain(await error.textContent());
        assert(said === plain(lookup(id, "errors.unsupported_link")), `error: "${said}"`);
        assert((await field.getAttribute("aria-invalid")) === "true", "the field is not marked invalid");
        await shot(`${id}-vtt-unsupported-link`);
      });
    }

    await check("vite dev, without PARLA_API, forwards the API to the Go server's default port", async () => {
      const goPort = Number(readFileSync(new URL("../config.go", WEBUI), "utf8").match(/defaultPort\s*=\s*"(\d+)"/)[1]);
      // A stand-in for the Go server on its default port, answering with the real server's config.
      const stub = createServer((req, res) => {
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify(req.url.startsWith("/api/config") ? { ...config, version: "stub-on-default-port" } : { ok: false }));
      });
      await new Promise((resolve, reject) => {
        stub.once("error", (e) => reject(new Error(`cannot listen on the default port ${goPort} for the check: ${e.message}`)));
        stub.listen(goPort, "127.0.0.1", resolve);
      });
      const vitePort = await freePort();
      const env = { ...process.env };
      delete env.PARLA_API;
      const vite = spawn(process.execPath, ["node_modules/vite/bin/vite.js", "--host", "127.0.0.1", "--port", String(vitePort), "--strictPort"], {
        cwd: WEBUI,
        env,
        stdio: "ignore",
      });
      try {
        const dev = `http://127.0.0.1:${vitePort}`;
        await until(() => fetch(`${dev}/`).then((r) => r.ok), "vite dev", 60000, 500);
        const got = await until(() => fetch(`${dev}/api/config`).then((r) => (r.ok ? r.json() : null)), "/api/config through vite", 30000, 500);
        assert(got.version === "stub-on-default-port", `vite answered ${JSON.stringify(got).slice(0, 200)}`);
        // The app itself, served by vite and fed through the proxy, in Arabic.
        await page.goto(`${dev}/ar/sst`, { waitUntil: "networkidle", timeout: 60000 });
        await page.getByRole("heading", { level: 1, name: lookup("ar", "sst.title") }).waitFor({ timeout: 60000 });
        facts.viteDefaultPort = goPort;
      } finally {
        vite.kill();
        stub.close();
      }
    });

    await check("no page errors", async () => {
      const own = pageErrors.filter((e) => !/vite|hmr|websocket/i.test(e));
      assert(own.length === 0, own.join("; "));
    });
  } catch (err) {
    abort(err);
  } finally {
    await b.close();
  }
  finish();
}

main();
