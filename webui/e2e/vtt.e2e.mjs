// Browser test of the video-to-text journey, as a visitor does it, against a
// running Parla server with the built-in test checkout and a speech-to-text
// engine. The video link points at a generated mp4 served with Range support
// (fake-openai.mjs serves one at /media/clip.mp4), so the server must accept
// private addresses (ALLOW_PRIVATE_URLS=1).
//
//   BASE_URL=http://127.0.0.1:8080 OUTBOX_DIR=$DATA_DIR/outbox \
//   MEDIA_URL=http://127.0.0.1:18090/media/clip.mp4 node webui/e2e/vtt.e2e.mjs
//
// Prints one line per check and a final "N passed, M failed"; exits non-zero on any failure.
import { formatClock } from "../src/lib/duration.js";
import { priceCents } from "../src/lib/pricing.js";
import { abort, assert, BASE, check, EMAIL, facts, finish, moneyOf, openBrowser, sleep, transcriptionTail } from "./harness.mjs";
import { CLIP_TEXT, probeSeconds } from "./media.mjs";

const MEDIA_URL = process.env.MEDIA_URL || "http://127.0.0.1:18090/media/clip.mp4";

async function main() {
  const probed = probeSeconds(MEDIA_URL);
  const b = await openBrowser();
  const { page, shot } = b;
  try {
    assert(probed, `${MEDIA_URL} is not media (is fake-openai.mjs running?)`);
    const seconds = Math.ceil(probed);
    let config;
    await check("GET /api/config: video-to-text is open, with its price", async () => {
      config = await b.config();
      assert(config.services?.vtt?.open, `vtt is closed: ${JSON.stringify(config.services?.vtt)}`);
      assert(config.vtt?.price?.per > 0 && config.vtt.price.rounding, "no vtt price");
      facts.vtt = { engine: config.vtt.engine, price: config.vtt.price, clipSeconds: seconds };
    });
    if (!config) throw new Error("no config: cannot go on");
    const money = moneyOf(config);

    await check("/vtt: intro, link input, no cost and no pay button before analysis", async () => {
      await page.goto(`${BASE}/vtt`, { waitUntil: "networkidle" });
      await page.getByRole("heading", { level: 1, name: "Video to text" }).waitFor();
      assert((await page.locator("nav a[aria-current=page]").textContent()) === "Video to text", "active link");
      assert((await page.getByTestId("cost").count()) === 0, "cost before analysis");
      assert((await page.getByTestId("upload").count()) === 0, "an upload step");
      assert(await page.getByText("Enter a video link and analyze it in the previous steps first.").isVisible(), "prompt");
      await shot("en-vtt");
    });

    await check("a link without media is refused with a translated message", async () => {
      await page.getByLabel("Video link", { exact: true }).fill(new URL("/media/missing.mp4", MEDIA_URL).href);
      await page.getByTestId("analyze").click();
      await page.getByTestId("error").waitFor({ timeout: 30000 });
      facts.missingCode = await page.getByTestId("error").getAttribute("data-code");
      assert((await page.getByTestId("cost").count()) === 0, "cost for a bad link");
    });

    await check("Analyze is busy meanwhile, then shows the link, duration and cost", async () => {
      // Hold the answer a moment so the busy state can be seen.
      await page.route("**/services/vtt/analyzevideo", async (route) => {
        await sleep(700);
        await route.continue();
      });
      await page.getByLabel("Video link", { exact: true }).fill(MEDIA_URL);
      const answer = page.waitForResponse((r) => r.url().endsWith("/services/vtt/analyzevideo"), { timeout: 60000 });
      await page.getByTestId("analyze").click();
      assert((await page.getByTestId("analyze").textContent()) === "Analyzing…", "no busy text");
      assert(await page.getByTestId("analyze").isDisabled(), "button not disabled while busy");
      const res = await answer;
      await page.unroute("**/services/vtt/analyzevideo");
      const body = await res.json();
      assert(res.status() === 200 && body.ok, `analysis answered ${res.status()} ${JSON.stringify(body)}`);
      assert(Math.abs(body.duration - seconds) <= 1, `server measured ${body.duration} s, ffprobe ${seconds} s`);
      assert(body.durationMinutes * 60 + body.durationSeconds === body.duration, JSON.stringify(body));
      assert(body.amount === priceCents(body.duration, config.vtt.price), `amount ${body.amount} breaks the configured rule`);
      facts.vttQuote = { duration: body.duration, speechSeconds: body.speechSeconds, amount: body.amount, title: body.title || "" };
      await page.getByTestId("analysis").waitFor();
      assert((await page.getByTestId("analysis").textContent()).includes(MEDIA_URL), "link not shown back");
      assert((await page.getByTestId("duration").textContent()).includes(`(${formatClock(body.duration)})`), "duration");
      assert((await page.getByTestId("cost").textContent()) === `Cost: ${money(body.amount)}`, await page.getByTestId("cost").textContent());
      assert((await page.getByTestId("analyze").textContent()) === "Analyze", "still busy");
    });

    await check("the analysis measured the small video's speech and shows it; the translate option is offered", async () => {
      const n = facts.vttQuote.speechSeconds;
      assert(Number.isInteger(n) && n >= 1 && n <= facts.vttQuote.duration, `speechSeconds ${n}`);
      const en = (await page.getByTestId("speech").textContent()).replace(/\s/g, " ");
      assert(new RegExp(`^About ${n} second${n === 1 ? "" : "s"} of speech in `).test(en), en);
      assert(!(await page.getByLabel("Translate into English").isChecked()), "translation ticked from the start");
    });

    await check("choose vtt, e-mails; the pay button appears", async () => {
      assert((await page.locator("input[name=format]:checked").count()) === 0, "a format is preselected");
      await page.getByRole("radio", { name: /^vtt/ }).check();
      assert((await page.getByTestId("format-current").textContent()) === "Selected format: vtt", "current format");
      await page.getByLabel("E-mail", { exact: true }).fill(EMAIL);
      await page.getByLabel("Verify e-mail").fill(EMAIL);
      await page.getByTestId("pay").waitFor();
      await shot("en-vtt-ready");
    });

    await transcriptionTail(b, {
      service: "vtt",
      probed,
      file: {
        kind: "a WebVTT file",
        check(text) {
          assert(text.startsWith("WEBVTT"), `not WebVTT: ${JSON.stringify(text.slice(0, 60))}`);
          const cues = text.match(/^(?:\d\d:)?\d\d:\d\d\.\d{3} --> (?:\d\d:)?\d\d:\d\d\.\d{3}/gm) || [];
          assert(cues.length >= 1, `no cues in ${JSON.stringify(text.slice(0, 120))}`);
          assert(text.includes(CLIP_TEXT.split(".")[0]), "clip text missing");
          return cues.length;
        },
      },
    });
  } catch (err) {
    abort(err);
  } finally {
    await b.close();
  }
  finish();
}

main();
