// Browser test of the audio-to-text journey, as a visitor does it, against a
// running Parla server with the built-in test checkout and a speech-to-text
// engine (in CI: STT_ENGINE=openai against fake-openai.mjs).
//
//   BASE_URL=http://127.0.0.1:8080 OUTBOX_DIR=$DATA_DIR/outbox \
//   SCREENSHOT_DIR=test-artifacts/screenshots node webui/e2e/sst.e2e.mjs
//
// The audio is made here with espeak-ng + ffmpeg. Prints one line per check
// and a final "N passed, M failed"; exits non-zero on any failure.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { priceCents } from "../src/lib/pricing.js";
import { abort, assert, BASE, check, EMAIL, facts, finish, moneyOf, openBrowser, transcriptionTail, until } from "./harness.mjs";
import { linkPageChecks } from "./linkpage.mjs";
import { CLIP_TEXT, makeSpeechMp3, probeSeconds, tempDir } from "./media.mjs";

async function main() {
  const dir = tempDir("parla-sst-e2e-");
  const mp3 = makeSpeechMp3(dir);
  const probed = probeSeconds(mp3);
  const seconds = Math.ceil(probed);
  const junk = join(dir, "notes.mp3");
  writeFileSync(junk, "These are notes, not audio.\n".repeat(50));
  // Eight seconds of a quiet room (hiss at -46 dBFS): audio, but no speech.
  const hush = join(dir, "hush.mp3");
  execFileSync("ffmpeg", ["-y", "-loglevel", "error", "-f", "lavfi", "-i", "anoisesrc=color=white:amplitude=0.005:r=22050:d=8", "-b:a", "64k", hush]);
  const b = await openBrowser();
  const { page, context, consoleLines, shot, setLang } = b;
  try {
    let config;
    await check("GET /api/config: audio-to-text is open, with its price and limits", async () => {
      config = await b.config();
      assert(config.services?.sst?.open, `sst is closed: ${JSON.stringify(config.services?.sst)}`);
      assert(config.sst?.price?.per > 0 && config.sst.price.rounding && config.sst.maxUploadBytes > 0, "no sst price or limit");
      facts.sst = { engine: config.sst.engine, price: config.sst.price, clipSeconds: seconds };
    });
    if (!config) throw new Error("no config: cannot go on");
    const money = moneyOf(config);
    const expected = priceCents(seconds, config.sst.price);

    await check("/sst: intro, provider, limits, languages, price, prompt; no pay button", async () => {
      await page.goto(`${BASE}/sst`, { waitUntil: "networkidle" });
      await page.getByRole("heading", { level: 1, name: "Audio to text" }).waitFor();
      assert((await page.locator("nav a[aria-current=page]").textContent()) === "Audio to text", "active link");
      const provider = await page.getByTestId("provider").textContent();
      assert(provider.includes({ openai: "OpenAI", whisper: "whisper.cpp" }[config.sst.engine]), provider);
      const accept = await page.getByLabel("Audio file", { exact: true }).getAttribute("accept");
      assert(accept.startsWith("audio/*") && accept.includes(".m4a"), accept);
      assert((await page.getByText(/Maximum size/).textContent()).replace(/\s/g, " ").includes("25 MB"), "size limit");
      await page.getByText(/Supported languages \(\d+\)/).waitFor();
      assert(await page.getByText("Upload an audio file in the previous steps first.").isVisible(), "prompt");
      assert((await page.getByTestId("pay").count()) === 0, "pay button without upload");
      await shot("en-sst");
    });

    await check("Upload without a file only says 'Please select a file' in the console", async () => {
      let posted = false;
      const seen = (r) => r.url().includes("/uploadaudio") && (posted = true);
      page.on("request", seen);
      await page.getByTestId("upload").click();
      await until(() => consoleLines.includes("Please select a file"), "the console note", 3000, 50);
      page.off("request", seen);
      assert(!posted, "an upload was sent");
      assert((await page.getByTestId("error").count()) === 0, "an error was shown");
    });

    await check("a file that is not audio is refused with a translated message", async () => {
      await page.getByLabel("Audio file", { exact: true }).setInputFiles(junk);
      await page.getByTestId("upload").click();
      await page.getByTestId("error").waitFor({ timeout: 15000 });
      const code = await page.getByTestId("error").getAttribute("data-code");
      assert(["unreadable_audio", "not_audio"].includes(code), `code ${code}`);
      facts.junkCode = code;
    });

    await check("a file with no speech is refused before payment (no_speech), in English and in Arabic", async () => {
      await page.getByLabel("Audio file", { exact: true }).setInputFiles(hush);
      await page.getByTestId("upload").click();
      await page.locator("[data-testid=error][data-code=no_speech]").waitFor({ timeout: 15000 });
      const en = await page.getByTestId("error").textContent();
      assert(en.startsWith("We found no speech in this recording"), en);
      assert((await page.getByTestId("cost").count()) === 0 && (await page.getByTestId("pay").count()) === 0, "priced anyway");
      await setLang("ar");
      const ar = await page.getByTestId("error").textContent();
      assert(ar.includes("لم نجد أي كلام"), `Arabic message: ${ar}`);
      await setLang("en");
    });

    await check("choosing the mp3 shows its duration in minutes and seconds", async () => {
      await page.getByLabel("Audio file", { exact: true }).setInputFiles(mp3);
      await page.getByTestId("browser-duration").waitFor({ timeout: 10000 });
      const text = (await page.getByTestId("browser-duration").textContent()).replace(/\s/g, " ");
      const shown = Number(/(\d+) sec/.exec(text)?.[1] ?? (/(\d+) min/.test(text) ? 0 : NaN)) + 60 * Number(/(\d+) min/.exec(text)?.[1] || 0);
      facts.browserDuration = text;
      assert(Math.abs(shown - seconds) <= 1, `browser says ${text}, ffprobe ${seconds} s`);
      assert(/\(\d+:\d\d\)/.test(text), `no m:ss in ${text}`);
    });

    await check("upload shows a live percentage, then the server's duration and cost", async () => {
      // A slow uplink, so the percentage is seen moving.
      const cdp = await context.newCDPSession(page);
      await cdp.send("Network.enable");
      await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 24 * 1024 });
      await page.evaluate(() => {
        window.__progress = [];
        const el = document.querySelector("[data-testid=upload-progress]");
        new MutationObserver(() => window.__progress.push(el.textContent)).observe(el, { subtree: true, childList: true, characterData: true });
      });
      const answer = page.waitForResponse((r) => r.url().endsWith("/services/sst/uploadaudio"), { timeout: 60000 });
      await page.getByTestId("upload").click();
      const res = await answer;
      await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await cdp.detach();
      const body = await res.json();
      assert(res.status() === 200 && body.ok, `upload answered ${res.status()} ${JSON.stringify(body)}`);
      await page.getByTestId("uploaded").waitFor();
      const seen = await page.evaluate(() => window.__progress);
      const percents = [...new Set(seen.map((s) => Number(/(\d+)\s?%/.exec(s)?.[1])).filter((n) => Number.isFinite(n)))];
      facts.uploadPercents = percents;
      assert(percents.some((p) => p > 0 && p < 100), `no intermediate percentage: ${JSON.stringify(seen.slice(0, 10))}`);
      assert(Math.abs(body.duration - seconds) <= 1, `server measured ${body.duration} s, ffprobe ${seconds} s`);
      assert(body.amount === priceCents(body.duration, config.sst.price), `server amount ${body.amount} breaks the configured rule`);
      facts.sstQuote = { duration: body.duration, amount: body.amount, expected };
      assert((await page.getByTestId("cost").textContent()) === `Cost: ${money(body.amount)}`, await page.getByTestId("cost").textContent());
      assert(/Duration: .*\(\d+:\d\d\)/.test(await page.getByTestId("server-duration").textContent()), "server duration");
      assert((await page.getByLabel("Audio file", { exact: true }).inputValue()) === "", "chooser not cleared");
      assert(await page.getByText("Uploaded: speech.mp3").isVisible(), "file name");
      facts.sstSpeech = body.speechSeconds;
      assert(Number.isInteger(body.speechSeconds) && body.speechSeconds >= 1 && body.speechSeconds <= body.duration, `speechSeconds ${body.speechSeconds} of ${body.duration}`);
    });

    await check("the speech measure is shown with its plural, in English and in Arabic", async () => {
      const n = facts.sstSpeech;
      const en = (await page.getByTestId("speech").textContent()).replace(/\s/g, " ");
      // The clip is a few seconds of speech, all of it speech.
      assert(new RegExp(`^About ${n} second${n === 1 ? "" : "s"} of speech in \\d+ sec\\.$`).test(en), en);
      await setLang("ar");
      const ar = (await page.getByTestId("speech").textContent()).replace(/\s/g, " ");
      // Arabic: 3–10 take the plural ثوانٍ, 11–99 the singular ثانية (CLDR "few" and "many").
      const word = n >= 3 && n <= 10 ? "ثوانٍ" : n === 2 ? "ثانيتين" : "ثانية";
      assert(ar.startsWith(`نحو ${n} ${word} من الكلام`), `Arabic: ${ar}`);
      facts.sstSpeechText = { en, ar };
      await shot("ar-sst-speech");
      await setLang("en");
    });

    await check("the Translate into English option is offered in English and Arabic, and kept across a reload", async () => {
      const box = page.getByLabel("Translate into English");
      assert(!(await box.isChecked()), "ticked from the start");
      await box.check();
      await until(() => page.evaluate(() => JSON.parse(localStorage.getItem("sst") || "{}").translate === true), "translate stored");
      await setLang("ar");
      assert(await page.getByLabel("الترجمة إلى الإنجليزية").isChecked(), "Arabic label or state");
      await setLang("en");
      await page.reload({ waitUntil: "networkidle" });
      assert(await page.getByLabel("Translate into English").isChecked(), "not kept across a reload");
      assert((await page.getByTestId("speech").count()) === 1, "the speech measure was not kept with the quote");
      // This journey delivers a transcript (the fake engine speaks no translation): untick.
      await page.getByLabel("Translate into English").uncheck();
    });

    await check("no format preselected; srt chosen and shown; e-mail mismatch warns", async () => {
      const checked = await page.locator("input[name=format]:checked").count();
      assert(checked === 0, "a format is preselected");
      await page.getByRole("radio", { name: /srt/ }).check();
      assert((await page.getByTestId("format-current").textContent()) === "Selected format: srt", "current format");
      await page.getByLabel("E-mail", { exact: true }).fill(EMAIL);
      await page.getByLabel("Verify e-mail").fill("visitor@example.org");
      await page.getByText("Warning: emails do not match").waitFor();
      assert((await page.getByTestId("pay").count()) === 0, "pay button despite mismatch");
      await page.getByLabel("Verify e-mail").fill(EMAIL);
      await page.getByTestId("pay").waitFor();
      assert((await page.getByTestId("pay").textContent()) === "Pay and Transcribe", "button text");
      await shot("en-sst-ready");
    });

    const link = await transcriptionTail(b, {
      service: "sst",
      probed,
      file: {
        kind: "an SRT file",
        check(text) {
          const cues = text.match(/^\d+\r?\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}$/gm) || [];
          assert(cues.length >= 1, `no SRT cues in ${JSON.stringify(text.slice(0, 120))}`);
          assert(text.includes(CLIP_TEXT.split(".")[0]), `clip text missing: ${JSON.stringify(text.slice(0, 120))}`);
          return cues.length;
        },
      },
    });
    await linkPageChecks(b, link);
  } catch (err) {
    abort(err);
  } finally {
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
  finish();
}

main();
