// Browser test of the audio-to-text journey, as a visitor does it, against a
// running Parla server with the built-in test checkout and a speech-to-text
// engine (in CI: STT_ENGINE=openai against fake-openai.mjs).
//
//   BASE_URL=http://127.0.0.1:4000 OUTBOX_DIR=$DATA_DIR/outbox \
//   SCREENSHOT_DIR=test-artifacts/screenshots node webui/e2e/sst.e2e.mjs
//
// The audio is made here with espeak-ng + ffmpeg. Prints one line per check
// and a final "N passed, M failed"; exits non-zero on any failure.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { priceCents } from "../src/lib/pricing.js";
import { abort, assert, BASE, check, EMAIL, facts, finish, moneyOf, openBrowser, transcriptionTail, until } from "./harness.mjs";
import { CLIP_TEXT, makeSpeechMp3, probeSeconds, tempDir } from "./media.mjs";

async function main() {
  const dir = tempDir("parla-sst-e2e-");
  const mp3 = makeSpeechMp3(dir);
  const probed = probeSeconds(mp3);
  const seconds = Math.ceil(probed);
  const junk = join(dir, "notes.mp3");
  writeFileSync(junk, "These are notes, not audio.\n".repeat(50));
  const b = await openBrowser();
  const { page, context, consoleLines, shot } = b;
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

    await transcriptionTail(b, {
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
  } catch (err) {
    abort(err);
  } finally {
    await b.close();
    rmSync(dir, { recursive: true, force: true });
  }
  finish();
}

main();
