// Browser test of issue 46, "read before you pay": the free transcription of a recording's
// first 30 s, shown under the price on /sst and /vtt before payment, in English and Arabic,
// 1280 and 320 px wide, against a running Parla server whose engine is fake-openai.mjs
// (FAKE_OPENAI_URL: its /stats names each transcription's language and seconds heard).
//
//   BASE_URL=http://127.0.0.1:8080 OUTBOX_DIR=$DATA_DIR/outbox FAKE_OPENAI_URL=http://127.0.0.1:18090 \
//   MEDIA_URL=http://127.0.0.1:18090/media/clip.mp4 node webui/e2e/preview.e2e.mjs
//
// A 3-minute upload shows its first lines and the language heard; "Not what you expected?"
// makes the preview again in the language picked (a new request with it), and the paid
// order carries that language to the engine; the engine hears at most 31 s for a preview;
// a link's first lines show after its analysis; a recording silent for its first 35 s says
// so; and the layout does not move while a preview arrives (layout shifts summed from a
// buffered PerformanceObserver: 0, where the same page without the box's reserved room
// shifts). Prints one line per check and "N passed, M failed"; exits non-zero on any failure.
import { rmSync } from "node:fs";
import { abort, assert, assertRtl, BASE, check, EMAIL, engineRequests, facts, finish, openBrowser, payAndConfirm, sleep, until } from "./harness.mjs";
import { CLIP_TEXT, makeLateSpeechMp3, makeLongSpeechMp3, probeSeconds, tempDir } from "./media.mjs";

const MEDIA_URL = process.env.MEDIA_URL || "http://127.0.0.1:18090/media/clip.mp4";
// A link of this run's own (the fake serves by path): a preview is kept an hour per client and
// link, and the other journeys, on the same server from the same address, preview MEDIA_URL.
const LINK = `${MEDIA_URL}${MEDIA_URL.includes("?") ? "&" : "?"}preview=${Date.now()}`;
const FIRST_WORDS = CLIP_TEXT.split(".")[0]; // "Hello from the test clip"
const HOLD_MS = 1500; // each preview answer is held this long, so its arrival is seen
const VIEWS = [
  { lang: "en", width: 1280 },
  { lang: "ar", width: 320 },
  { lang: "ar", width: 1280 },
  { lang: "en", width: 320 },
];
const HEARD = { en: "Heard: ", ar: "اللغة المسموعة: " };
const NO_SPEECH = {
  en: "No speech in the first 30 seconds — the rest of the recording may still have some.",
  ar: "لا يوجد كلام في أول 30 ثانية — قد يحتوي باقي التسجيل على كلام.",
};

/** Records every layout shift with its time, from the page's first byte (buffered). */
function recordTimedShifts() {
  window.__shifts = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const what = e.sources.map((s) => `${s.node?.nodeName?.toLowerCase() || "?"}.${s.node?.className || ""} ${Math.round(s.previousRect.y)}→${Math.round(s.currentRect.y)}`);
      window.__shifts.push({ at: e.startTime, value: e.value, input: e.hadRecentInput, what: what.join(", ") });
    }
  }).observe({ type: "layout-shift", buffered: true });
}

/** The layout shifts not caused by the visitor since `since` (performance.now() of the page): their sum and what moved. */
async function shiftsSince(page, since) {
  const shifts = await page.evaluate((t) => window.__shifts.filter((s) => s.at >= t && !s.input), since);
  return { sum: shifts.reduce((n, s) => n + s.value, 0), moved: shifts.map((s) => `${s.value.toFixed(4)}: ${s.what}`) };
}

/** The page's address in `lang` (English unprefixed). */
const address = (lang, path) => `${BASE}${lang === "en" ? "" : `/${lang}`}${path}`;

/** Holds the answers of `service`'s preview HOLD_MS (the page waits with its box in place); records each request's body. */
async function holdPreviews(page, service, bodies) {
  await page.unroute(`**/services/${service}/preview`).catch(() => {});
  await page.route(`**/services/${service}/preview`, async (route) => {
    bodies.push(route.request().postDataJSON());
    await sleep(HOLD_MS);
    await route.continue();
  });
}

/**
 * Waits for the preview box while its answer is pending, scrolls it into view (so that what
 * lies below it is in the viewport, where a shift counts), then for its outcome (`done`, a
 * selector inside the box); returns the shifts in between, the box's height before and after,
 * and what the page shows.
 */
async function watchArrival(page, done) {
  const box = page.getByTestId("transcript-preview");
  await page.locator("[data-testid=transcript-preview][data-status=pending]").waitFor({ timeout: 30000 });
  const since = await page.evaluate(async () => {
    document.querySelector("[data-testid=transcript-preview]").scrollIntoView({ block: "center" });
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    return performance.now();
  });
  const before = (await box.boundingBox()).height;
  await box.locator(done).waitFor({ timeout: 90000 });
  await page.waitForTimeout(600); // a shift is reported after the frame that made it
  const after = (await box.boundingBox()).height;
  return { ...(await shiftsSince(page, since)), before, after };
}

/** The name of language `code` in interface language `lang`, as the page names it (Intl.DisplayNames). */
const languageName = (page, lang, code) => page.evaluate(([l, c]) => new Intl.DisplayNames([l], { type: "language" }).of(c), [lang, code]);

/** The fake engine's transcription requests after the first `from`. */
async function engineSince(from) {
  const all = await engineRequests();
  return all ? all.slice(from) : null;
}

/** Asserts every request heard at most 31 s (a preview's 30 s, with a frame's slack). */
function assertPreviewLength(requests) {
  const long = requests.filter((r) => !(r.seconds <= 31));
  assert(long.length === 0, `the engine heard more than 31 s for a preview: ${JSON.stringify(long)}`);
}

/** Checks the page is no wider than its viewport and the box lies inside it. */
async function assertFits(page, width) {
  const m = await page.evaluate(() => {
    const r = document.querySelector("[data-testid=transcript-preview]").getBoundingClientRect();
    return { scroll: document.documentElement.scrollWidth, left: r.left, right: r.right };
  });
  assert(m.scroll <= width && m.left >= 0 && m.right <= width + 0.5, `${width} px: ${JSON.stringify(m)}`);
}

async function main() {
  const dir = tempDir("parla-preview-e2e-");
  const long = makeLongSpeechMp3(dir, 180);
  const late = makeLateSpeechMp3(dir, 35);
  const probedLong = probeSeconds(long);
  const b = await openBrowser();
  const { page, shot, setLang } = b;
  try {
    await page.context().addInitScript(recordTimedShifts);
    let config;
    await check("GET /api/config: previews of 30 s are on, both services open", async () => {
      config = await b.config();
      assert(config.preview?.enabled === true && config.preview.seconds === 30, `preview: ${JSON.stringify(config.preview)}`);
      assert(config.services?.sst?.open && config.services?.vtt?.open, "a service is closed");
      facts.preview = config.preview;
    });
    if (!config?.preview?.enabled) throw new Error("previews are off: cannot go on");
    const engineStart = (await engineRequests())?.length ?? 0;

    const sstBodies = [];
    await holdPreviews(page, "sst", sstBodies);
    await check("/sst, en, 1280 px: a 3-minute upload shows its first lines and the language heard before Pay; nothing moves while they arrive", async () => {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(address("en", "/sst"), { waitUntil: "networkidle" });
      await page.getByLabel("Audio file", { exact: true }).setInputFiles(long);
      await page.getByTestId("upload").click();
      await page.getByTestId("uploaded").waitFor({ timeout: 60000 });
      const seen = await watchArrival(page, "[data-testid=preview-text]");
      assert(seen.sum < 0.001, `layout shift ${seen.sum} while the preview arrived: ${seen.moved.join(" | ")}`);
      assert(Math.abs(seen.after - seen.before) < 0.5, `the box grew from ${seen.before} to ${seen.after} px`);
      const text = await page.getByTestId("preview-text").textContent();
      assert(text.includes(FIRST_WORDS), `preview text: ${text}`);
      const heard = await page.getByTestId("preview-heard").textContent();
      assert(heard === `${HEARD.en}${await languageName(page, "en", "en")}.`, `heard: ${heard}`);
      assert((await page.getByTestId("pay").count()) === 0, "the pay button before the e-mails");
      assert(sstBodies[0]?.filePath && sstBodies[0].language === "", `first request: ${JSON.stringify(sstBodies[0])}`);
      facts.sstPreview = { text: text.slice(0, 60), heard, shift: seen.sum, box: seen.after, requests: sstBodies.length };
      await shot("en-sst-preview-1280");
    });

    await check("the engine heard at most 31 s of the 3-minute upload for its preview", async () => {
      const requests = await engineSince(engineStart);
      if (!requests) return console.log("      (no FAKE_OPENAI_URL: not checked)");
      assert(requests.length >= 1, "the engine was not asked");
      assertPreviewLength(requests);
      facts.sstPreviewEngine = requests.map((r) => ({ seconds: r.seconds, language: r.language }));
    });

    for (const { lang, width } of VIEWS.slice(1)) {
      await check(`/sst, ${lang}, ${width} px: the kept upload's preview shows again, laid out ${lang === "ar" ? "right to left" : "left to right"}, without a shift`, async () => {
        await page.setViewportSize({ width, height: width < 600 ? 700 : 900 });
        await page.goto(address(lang, "/sst"), { waitUntil: "load" });
        const seen = await watchArrival(page, "[data-testid=preview-text]");
        assert(seen.sum < 0.001, `layout shift ${seen.sum}: ${seen.moved.join(" | ")}`);
        assert(Math.abs(seen.after - seen.before) < 0.5, `the box grew from ${seen.before} to ${seen.after} px`);
        assert((await page.getByTestId("preview-text").textContent()).includes(FIRST_WORDS), "no first lines");
        const heard = await page.getByTestId("preview-heard").textContent();
        assert(heard.startsWith(HEARD[lang]) && heard.includes(await languageName(page, lang, "en")), `heard: ${heard}`);
        await assertFits(page, width);
        if (lang === "ar") {
          await assertRtl(page);
          const dirs = await page.evaluate(() => ({
            box: getComputedStyle(document.querySelector("[data-testid=transcript-preview]")).direction,
            text: getComputedStyle(document.querySelector("[data-testid=preview-text]")).direction,
          }));
          // The page reads right to left; the English text keeps its own direction (dir=auto).
          assert(dirs.box === "rtl" && dirs.text === "ltr", JSON.stringify(dirs));
          await page.getByTestId("preview-wrong").click();
          await page.getByLabel("اللغة المنطوقة في التسجيل:").waitFor();
        }
        facts[`sstPreview_${lang}_${width}`] = { shift: seen.sum, box: seen.after };
        await shot(`${lang}-sst-preview-${width}`);
      });
    }

    await check("the measure catches a shift: without the box's reserved room, the text's arrival moves what is below", async () => {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(address("en", "/sst"), { waitUntil: "domcontentloaded" });
      // The page's policy allows no inline style: the rules go into its own stylesheet (CSSOM).
      await page.waitForFunction(() => document.styleSheets.length > 0);
      await page.evaluate(() => {
        const sheet = document.styleSheets[0];
        sheet.insertRule(".preview-body, .preview-meta { min-block-size: 0 !important; }", sheet.cssRules.length);
        sheet.insertRule(".preview-skeleton { display: none !important; }", sheet.cssRules.length);
      });
      const seen = await watchArrival(page, "[data-testid=preview-text]");
      assert(seen.sum > 0.001, `no shift measured without the reserved room (${seen.sum}; box ${seen.before}→${seen.after} px)`);
      facts.shiftWithoutRoom = seen.sum;
    });

    let correctedFrom = 0;
    await check("'Not what you expected?' → French: a new request with language fr, the page's spoken language set, no shift when it arrives", async () => {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(address("en", "/sst"), { waitUntil: "networkidle" });
      await page.getByTestId("preview-text").waitFor({ timeout: 30000 });
      correctedFrom = (await engineRequests())?.length ?? 0;
      const asked = sstBodies.length;
      await page.getByTestId("preview-wrong").click();
      await page.getByLabel("Language spoken in the recording:").selectOption("fr");
      assert((await page.getByLabel("Spoken language", { exact: true }).inputValue()) === "fr", "the page's spoken language is not fr");
      const seen = await watchArrival(page, "[data-testid=preview-text]");
      assert(seen.sum < 0.001, `layout shift ${seen.sum}: ${seen.moved.join(" | ")}`);
      const redone = sstBodies.slice(asked);
      assert(redone.length >= 1 && redone.every((x) => x.language === "fr"), `requests after the pick: ${JSON.stringify(redone)}`);
      const heard = await page.getByTestId("preview-heard").textContent();
      assert(heard === `Transcribed as ${await languageName(page, "en", "fr")}, as you chose.`, heard);
      const requests = await engineSince(correctedFrom);
      if (requests) {
        assert(requests.some((r) => r.language === "fr"), `the engine was not asked in French: ${JSON.stringify(requests)}`);
        assertPreviewLength(requests);
      }
      await shot("en-sst-preview-corrected");
    });

    await check("the paid order carries the language picked: the checkout sends fr, the engine transcribes the whole 3 minutes in fr", async () => {
      await page.getByRole("radio", { name: /srt/ }).check();
      await page.getByLabel("E-mail", { exact: true }).fill(EMAIL);
      await page.getByLabel("Verify e-mail").fill(EMAIL);
      await page.getByTestId("pay").waitFor();
      await page.evaluate(() => localStorage.setItem("lang", "en")); // payAndConfirm expects it kept
      const sent = page.waitForRequest((r) => r.url().endsWith("/payment/sst/create-checkout-session"), { timeout: 30000 });
      const paid = payAndConfirm(page, { service: "sst", successPath: "/sst-payment/success", shot, setLang });
      const order = (await sent).postDataJSON().order;
      assert(order.language === "fr", `checkout order: ${JSON.stringify(order)}`);
      await paid;
      const requests = await engineSince(correctedFrom);
      if (!requests) return console.log("      (no FAKE_OPENAI_URL: engine not checked)");
      const whole = requests.filter((r) => r.seconds > 31);
      const heard = whole.reduce((n, r) => n + r.seconds, 0);
      assert(whole.length >= 1 && whole.every((r) => r.language === "fr"), `the order's requests: ${JSON.stringify(whole)}`);
      assert(Math.abs(heard - probedLong) <= 1, `the engine heard ${heard} s of ${probedLong} s`);
      facts.sstOrderEngine = whole.map((r) => ({ seconds: r.seconds, language: r.language }));
    });

    await check("/sst, ar, 320 px: a recording silent for its first 35 s says there is no speech in the first 30 seconds; the order stays open", async () => {
      await page.setViewportSize({ width: 320, height: 700 });
      await page.goto(address("ar", "/sst"), { waitUntil: "networkidle" });
      const from = (await engineRequests())?.length ?? 0;
      await page.getByTestId("file").setInputFiles(late);
      await page.getByTestId("upload").click();
      await page.getByTestId("uploaded").waitFor({ timeout: 60000 });
      const seen = await watchArrival(page, "[data-testid=preview-note]");
      assert(seen.sum < 0.001, `layout shift ${seen.sum}: ${seen.moved.join(" | ")}`);
      const note = page.getByTestId("preview-note");
      assert((await note.getAttribute("data-code")) === "no_speech", `note ${await note.getAttribute("data-code")}: ${await note.textContent()}`);
      assert((await note.textContent()) === NO_SPEECH.ar, await note.textContent());
      assert((await page.getByTestId("cost").count()) === 1, "no price");
      await assertFits(page, 320);
      const requests = await engineSince(from);
      if (requests) assertPreviewLength(requests);
      await shot("ar-sst-preview-no-speech-320");
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(address("en", "/sst"), { waitUntil: "networkidle" });
      await page.locator("[data-testid=preview-note][data-code=no_speech]").waitFor({ timeout: 30000 });
      assert((await page.getByTestId("preview-note").textContent()) === NO_SPEECH.en, await page.getByTestId("preview-note").textContent());
      await shot("en-sst-preview-no-speech-1280");
    });

    const vttBodies = [];
    await holdPreviews(page, "vtt", vttBodies);
    await check("/vtt, en, 1280 px: a direct link's first lines show after its analysis, without a shift", async () => {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.goto(address("en", "/vtt"), { waitUntil: "networkidle" });
      const from = (await engineRequests())?.length ?? 0;
      await page.getByLabel("Video link", { exact: true }).fill(LINK);
      await page.getByTestId("analyze").click();
      await page.getByTestId("analysis").waitFor({ timeout: 60000 });
      const seen = await watchArrival(page, "[data-testid=preview-text]");
      assert(seen.sum < 0.001, `layout shift ${seen.sum}: ${seen.moved.join(" | ")}`);
      assert((await page.getByTestId("preview-text").textContent()).includes(FIRST_WORDS), "no first lines");
      assert(vttBodies[0]?.video === LINK, `request: ${JSON.stringify(vttBodies[0])}`);
      const requests = await engineSince(from);
      if (requests) {
        assert(requests.length >= 1, "the engine was not asked");
        assertPreviewLength(requests);
      }
      await shot("en-vtt-preview-1280");
    });

    await check("/vtt, ar, 320 px: the kept analysis's preview, right to left, in the page's width", async () => {
      await page.setViewportSize({ width: 320, height: 700 });
      await page.goto(address("ar", "/vtt"), { waitUntil: "load" });
      const seen = await watchArrival(page, "[data-testid=preview-text]");
      assert(seen.sum < 0.001, `layout shift ${seen.sum}: ${seen.moved.join(" | ")}`);
      assert((await page.getByTestId("preview-heard").textContent()).startsWith(HEARD.ar), "heard");
      await assertFits(page, 320);
      await assertRtl(page);
      await shot("ar-vtt-preview-320");
    });

    await check("no uncaught errors or unexpected dialogs in the page", async () => {
      assert(b.pageErrors.length === 0, b.pageErrors.join(" | "));
    });
  } catch (err) {
    abort(err);
  } finally {
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
  finish();
}

main();
