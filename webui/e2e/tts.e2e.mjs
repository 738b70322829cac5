// Browser test of the text-to-speech journey, as a visitor does it, against a
// running Parla server with the built-in test checkout.
//
//   BASE_URL=http://127.0.0.1:8080 OUTBOX_DIR=$DATA_DIR/outbox \
//   SCREENSHOT_DIR=test-artifacts/screenshots node webui/e2e/tts.e2e.mjs
//
// Drives Debian's chromium (CHROMIUM, default /usr/bin/chromium) through
// playwright-core. Prints one line per check and a final "N passed, M failed";
// exits non-zero on any failure.
import { readFileSync } from "node:fs";
import { CONSTRUCTED } from "../src/lib/inputLanguages.js";
import { priceCents } from "../src/lib/pricing.js";
import { abort, assert, BASE, check, EMAIL, emailWithLink, facts, finish, LANGS, moneyOf, openBrowser, until } from "./harness.mjs";

/** Kind of audio in the first bytes, or "" if they are not audio. */
function audioKind(buf) {
  const b = buf.subarray(0, 12);
  if (b.toString("latin1", 0, 3) === "ID3") return "mp3";
  if (b[0] === 0xff && (b[1] & 0xe0) === 0xe0) return (b[1] & 0x06) === 0 ? "aac" : "mp3"; // MPEG frame / ADTS
  if (b.toString("latin1", 0, 4) === "fLaC") return "flac";
  if (b.toString("latin1", 0, 4) === "OggS") return "opus";
  if (b.toString("latin1", 4, 8) === "ftyp") return "aac";
  return "";
}

async function main() {
  const { context, page, pageErrors, shot, setLang, close } = await openBrowser();
  let config;
  try {
    await check("GET /api/config answers the contract", async () => {
      const res = await page.request.get(`${BASE}/api/config`);
      assert(res.ok(), `status ${res.status()}`);
      config = await res.json();
      assert(config.tts?.price?.per > 0 && config.tts.price.rounding, "no tts price");
      assert(config.services?.tts?.open, "tts service is closed on this server");
      facts.config = { version: config.version, paymentMode: config.payment?.mode, price: config.tts.price };
    });
    if (!config) throw new Error("no config: cannot go on");
    const money = moneyOf(config);

    await check("about page: title, slogan, nav, footer version", async () => {
      await page.goto(`${BASE}/`, { waitUntil: "networkidle" });
      await page.getByRole("heading", { level: 1 }).waitFor();
      assert((await page.locator(".brand-title").textContent()) === "Parla", "product title");
      assert((await page.locator(".slogan").textContent()).length > 10, "slogan");
      assert((await page.locator("nav a[aria-current=page]").textContent()) === "About", "active link is About");
      await page.getByText(config.version, { exact: true }).waitFor({ timeout: 5000 });
      assert((await page.locator(".points > li").count()) === 6, "six about points");
      await shot("en-about");
    });

    for (const lng of LANGS) {
      await check(`language ${lng}: texts, <html lang/dir>, metadata`, async () => {
        await setLang(lng);
        const s = await page.evaluate(() => ({
          lang: document.documentElement.lang,
          dir: document.documentElement.dir,
          title: document.title,
          desc: document.querySelector('meta[name="description"]')?.content,
          og: document.querySelector('meta[property="og:locale"]')?.content,
          tw: document.querySelector('meta[name="twitter:title"]')?.content,
          nav: [...document.querySelectorAll("nav a")].map((a) => a.textContent),
        }));
        assert(s.dir === (lng === "ar" ? "rtl" : "ltr"), `dir ${s.dir}`);
        assert(s.lang === { jp: "ja", zh: "zh-Hans" }[lng] || s.lang === lng, `lang ${s.lang}`);
        assert(s.title && s.desc && s.og && s.tw, "metadata missing");
        if (lng !== "en") assert(s.nav[1] !== "Text to speech", `nav still English: ${s.nav}`);
        facts[`title_${lng}`] = s.title;
      });
    }
    await check("language is remembered after a reload", async () => {
      await setLang("ar");
      await page.reload({ waitUntil: "networkidle" });
      assert((await page.evaluate(() => document.documentElement.dir)) === "rtl", "not rtl after reload");
      await shot("ar-about");
      await setLang("en");
    });

    await check("nav to /tts highlights it", async () => {
      await page.getByRole("navigation").getByRole("link", { name: "Text to speech" }).click();
      await page.waitForURL(`${BASE}/tts`);
      await page.getByPlaceholder("Enter your text here").waitFor();
      assert((await page.locator("nav a[aria-current=page]").textContent()) === "Text to speech", "active link");
    });

    await check("/tts time to interactive (fresh load, empty cache)", async () => {
      const cdp = await context.newCDPSession(page);
      await cdp.send("Network.clearBrowserCache");
      await cdp.detach();
      await page.goto(`${BASE}/tts`, { waitUntil: "commit" });
      await page.getByPlaceholder("Enter your text here").waitFor();
      await until(() => page.evaluate(() => performance.getEntriesByName("parla:tts-interactive").length > 0), "the tts-interactive mark", 5000, 50);
      const t = await page.evaluate(() => {
        const nav = performance.getEntriesByType("navigation")[0];
        const mark = performance.getEntriesByName("parla:tts-interactive")[0];
        const js = performance
          .getEntriesByType("resource")
          .filter((r) => r.name.endsWith(".js"))
          .reduce((n, r) => n + (r.transferSize || 0), 0);
        return {
          ready: Math.round(mark.startTime),
          domInteractive: Math.round(nav.domInteractive),
          load: Math.round(nav.loadEventEnd),
          jsTransferBytes: js,
        };
      });
      facts.tti = t;
      console.log(`      /tts interactive at ${t.ready} ms (domInteractive ${t.domInteractive} ms, load ${t.load} ms, JS transferred ${t.jsTransferBytes} B)`);
      // That the page becomes interactive at all, on a loaded runner; its speed is Lighthouse's to measure.
      assert(t.ready < 15000, "slower than 15 s");
    });

    await check("voice sample plays (GET /api/tts/samples/echo)", async () => {
      const res = await page.request.get(`${BASE}/api/tts/samples/echo`);
      assert(res.ok(), `sample status ${res.status()}`);
      assert(audioKind(await res.body()), "sample is not audio");
      const state = await page.locator('[data-voice="echo"] audio').evaluate(
        (a) =>
          new Promise((resolve) => {
            const done = (r) => resolve({ r, t: a.currentTime, ready: a.readyState, err: a.error?.code });
            a.addEventListener("playing", () => setTimeout(() => done("playing"), 300), { once: true });
            a.addEventListener("ended", () => done("ended"), { once: true });
            a.addEventListener("error", () => done("error"), { once: true });
            a.play().catch((e) => done(`play() rejected: ${e.name}`));
            setTimeout(() => done("timeout"), 10000);
          }),
      );
      assert(state.r === "playing" || state.r === "ended", JSON.stringify(state));
      assert(await page.getByRole("radio", { name: "Echo" }).isChecked(), "playing a sample selects its voice");
    });

    const rule = config.tts.price;
    const unit = rule.per;
    const text = "Hello from Parla. Bonjour 😀 你好 مرحبا.";
    await check("typing shows the live count (code points) and cost", async () => {
      const box = page.getByPlaceholder("Enter your text here");
      assert(await page.getByText("Enter text to convert to voice in the previous steps.").isVisible(), "prompt");
      await box.fill("x".repeat(unit + 1));
      await until(async () => (await page.getByTestId("cost").textContent()) === `Cost: ${money(priceCents(unit + 1, rule))}`, `cost of ${unit + 1}`, 3000);
      await box.fill("");
      await box.pressSequentially("Hi 😀");
      assert((await page.getByTestId("char-count").textContent()) === "Characters: 4", await page.getByTestId("char-count").textContent());
      await box.fill(text);
      const n = [...text].length;
      assert((await page.getByTestId("char-count").textContent()) === `Characters: ${n}`, "count");
      assert((await page.getByTestId("cost").textContent()) === `Cost: ${money(priceCents(n, rule))}`, "cost");
    });

    await check("a Spanish text shows Spanish detected, and the visitor can change it", async () => {
      const langs = config.tts.languages || [];
      assert(langs.includes("es") && langs.includes("ja") && langs.length > 50, `tts.languages: ${langs.length}`);
      const summary = await page.locator("details.languages summary").textContent();
      // The engine's list less the constructed and fictional languages the page leaves out.
      const listed = langs.filter((code) => !CONSTRUCTED.has(code)).length;
      assert(listed < langs.length && summary === `Supported languages (${listed})`, `list is not the engine's: ${summary}`);
      const box = page.getByPlaceholder("Enter your text here");
      await box.fill("Esta mañana hacía frío, así que nos quedamos en casa leyendo libros. Por la tarde salió el sol y dimos un largo paseo junto al río.");
      const shown = page.getByTestId("detected-language");
      await until(async () => (await shown.count()) > 0 && (await shown.textContent()) === "Detected language: Spanish", "Spanish detected", 5000);
      const select = page.getByLabel("Language of the text");
      assert((await select.inputValue()) === "", "detection is the default");
      await select.selectOption({ label: "Portuguese" });
      await until(async () => (await shown.textContent()) === "The text will be read in Portuguese.", "Portuguese chosen", 5000);
      await shot("en-tts-language");
      await select.selectOption("");
      await until(async () => (await shown.textContent()) === "Detected language: Spanish", "back to detection", 5000);
      await box.fill(text);
    });

    await check("change voice, format and speed (keyboard, reset)", async () => {
      await page.getByRole("radio", { name: "Nova" }).check();
      await page.getByRole("radio", { name: /flac/ }).check();
      await page.getByRole("radio", { name: /mp3/ }).check();
      const slider = page.getByLabel("Speed");
      await slider.focus();
      for (let i = 0; i < 25; i++) await page.keyboard.press("ArrowRight");
      assert((await page.getByTestId("speed-value").textContent()) === "1.25", await page.getByTestId("speed-value").textContent());
      await page.getByRole("button", { name: "Reset" }).click();
      assert((await page.getByTestId("speed-value").textContent()) === "1.00", "reset");
      await slider.focus();
      for (let i = 0; i < 10; i++) await page.keyboard.press("ArrowRight");
      assert((await page.getByTestId("speed-value").textContent()) === "1.10", "1.10");
      assert(await page.getByRole("radio", { name: "Nova" }).isChecked(), "Nova");
    });

    await check("different e-mails: warning, no pay button; fixed: pay button", async () => {
      await page.getByLabel("E-mail", { exact: true }).fill(EMAIL);
      await page.getByLabel("Verify e-mail").fill("visitor@example.org");
      await page.getByText("Warning: emails do not match").waitFor();
      assert((await page.getByTestId("pay").count()) === 0, "pay button shown despite mismatch");
      await page.getByLabel("Verify e-mail").fill(EMAIL);
      await page.getByTestId("pay").waitFor();
      assert((await page.getByText("Warning: emails do not match").count()) === 0, "warning stays");
      assert((await page.getByTestId("pay").textContent()).includes(money(priceCents([...text].length, rule))), "amount on the button");
    });

    await check("/tts controls have accessible names; Tab shows a visible focus", async () => {
      const unnamed = await page.evaluate(() =>
        [...document.querySelectorAll("input, textarea, select, button, audio, a[href]")]
          .filter((el) => {
            const name =
              el.getAttribute("aria-label") ||
              (el.getAttribute("aria-labelledby") && document.getElementById(el.getAttribute("aria-labelledby"))?.textContent) ||
              [...(el.labels || [])].map((l) => l.textContent).join("") ||
              (el.tagName === "BUTTON" || el.tagName === "A" ? el.textContent : "");
            return !String(name).trim();
          })
          .map((el) => el.outerHTML.slice(0, 80)),
      );
      assert(unnamed.length === 0, `unnamed: ${unnamed.join(" | ")}`);
      const fresh = await context.newPage();
      await fresh.goto(`${BASE}/tts`);
      await fresh.getByPlaceholder("Enter your text here").waitFor();
      await fresh.keyboard.press("Tab");
      const first = await fresh.evaluate(() => {
        const el = document.activeElement;
        const cs = getComputedStyle(el);
        return { cls: el.className, outline: cs.outlineStyle, width: cs.outlineWidth };
      });
      await fresh.close();
      assert(first.cls === "skip", `first Tab stop is ${first.cls}, not the skip link`);
      assert(first.outline !== "none" && first.width !== "0px", `no visible focus: ${JSON.stringify(first)}`);
    });

    await check("375 px wide: no horizontal scrolling on /tts", async () => {
      await page.setViewportSize({ width: 375, height: 800 });
      await page.waitForTimeout(200);
      const w = await page.evaluate(() => document.documentElement.scrollWidth);
      await shot("en-tts-375px");
      await page.setViewportSize({ width: 1280, height: 900 });
      assert(w <= 375, `page is ${w}px wide`);
    });
    await shot("en-tts");

    await check("cancel on the test checkout returns to /tts with the choices restored", async () => {
      await page.getByTestId("pay").click();
      await page.waitForURL(/\/checkout\/test\//, { timeout: 15000 });
      await page.getByRole("button", { name: "Cancel" }).click();
      await page.waitForURL(`${BASE}/tts**`, { timeout: 15000 });
      await page.getByPlaceholder("Enter your text here").waitFor();
      assert((await page.getByPlaceholder("Enter your text here").inputValue()) === text, "text not restored");
      assert(await page.getByRole("radio", { name: "Nova" }).isChecked(), "voice not restored");
      assert((await page.getByTestId("speed-value").textContent()) === "1.10", "speed not restored");
    });

    let sessionId = "";
    await check("pay on the test checkout", async () => {
      await page.getByTestId("pay").click();
      await page.waitForURL(/\/checkout\/test\//, { timeout: 15000 });
      sessionId = await page.evaluate(() => localStorage.getItem("sessionId"));
      assert(sessionId, "sessionId not stored");
      const saved = await page.evaluate(() => JSON.parse(localStorage.getItem("tts")));
      assert(saved.activeVoice === "nova" && saved.outputFormat === "mp3" && saved.speed === 1.1 && saved.email === EMAIL, JSON.stringify(saved));
      await shot("en-checkout");
      await page.getByRole("button", { name: /^Pay/ }).click();
      await page.waitForURL(/\/payment\/success/, { timeout: 15000 });
    });

    let link = "";
    await check("/payment/success: progress, then the link", async () => {
      await page.getByText("Payment successful").waitFor({ timeout: 10000 }).catch(() => {});
      facts.sawProgress = (await page.getByTestId("progress").count()) > 0;
      await until(() => page.evaluate(() => localStorage.getItem("sessionId") === null), "sessionId removed from storage", 5000);
      await page.getByTestId("success").waitFor({ timeout: 180000 });
      link = await page.getByTestId("download").getAttribute("href");
      assert(link, "no link");
      assert(await page.getByText(EMAIL, { exact: false }).isVisible(), "address not shown");
      assert(await page.getByText(`expires in ${config.linkDays} days`, { exact: false }).isVisible(), "expiry warning");
      assert((await page.evaluate(() => localStorage.getItem("tts"))) === null, "tts record not cleared");
      await shot("en-success");
      await setLang("ar");
      await shot("ar-success");
      await setLang("en");
    });

    await check("download the file: it is mp3 audio", async () => {
      const [dl] = await Promise.all([page.waitForEvent("download", { timeout: 30000 }), page.getByTestId("download").click()]);
      const buf = readFileSync(await dl.path());
      facts.download = { bytes: buf.length, name: dl.suggestedFilename() };
      assert(buf.length > 1000, `only ${buf.length} bytes`);
      assert(audioKind(buf) === "mp3", `not mp3: ${buf.subarray(0, 4).toString("hex")}`);
    });

    await check("the e-mail in OUTBOX_DIR carries the link", async () => {
      facts.email = await emailWithLink(link);
    });

    for (const lng of ["en", "ar"]) {
      await check(`screenshots of every page in ${lng}`, async () => {
        for (const [name, path] of [
          ["about", "/"],
          ["tts", "/tts"],
          ["sst", "/sst"],
          ["vtt", "/vtt"],
          ["payment-error", "/payment/error?service=tts&code=price_mismatch"],
          ["not-found", "/no-such-page"],
        ]) {
          await page.goto(`${BASE}${path}`, { waitUntil: "networkidle" });
          await setLang(lng);
          await page.getByRole("heading", { level: 1 }).first().waitFor();
          if (name === "payment-error") {
            const title = await page.getByRole("heading", { level: 1 }).textContent();
            assert(title === (lng === "en" ? "Payment Error" : "خطأ في الدفع"), `title ${title}`);
          }
          await shot(`${lng}-${name}`);
        }
        await setLang("en");
      });
    }

    await check("no uncaught errors or unexpected dialogs in the page", async () => {
      assert(pageErrors.length === 0, pageErrors.join(" | "));
    });
  } catch (err) {
    abort(err);
  } finally {
    await close();
  }
  finish();
}

main();
