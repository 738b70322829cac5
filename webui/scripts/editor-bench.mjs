// Times the transcript editor opening a 3-hour transcript (issue 23: under 1 s): the built
// app (dist/, `npm run build` first) is served with a stand-in for GET /api/config and
// GET /r/bench/transcript (CUES cues over three hours), and Chromium opens /r/bench/edit
// in a fresh profile each run, as a visitor following the letter's link.
//
//   node scripts/editor-bench.mjs            (RUNS=7 CUES=2500 WIDTH=1280 CHROMIUM=/usr/bin/chromium;
//                                             WATERFALL=1 also prints each run's requests;
//                                             DIST=another build; COMPARE=a second build,
//                                             run in turn with the first, run for run)
//
// Per run, in ms from the start of navigation: the transcript's answer received, the first
// cue's text box in the page (editable), every cue in the page; and the longest main-thread
// task after the first cue (how long a keystroke there could wait); how compact the list is
// (the median cue's height, the page's height with every cue laid out); and how long the
// last cue takes to scroll into view with the focus in it. Prints each run, the
// medians and the load average, which on a shared machine says as much as the numbers.
import { readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { availableParallelism, loadavg } from "node:os";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CONFIG } from "../test/fixtures.js";

/** The builds timed, in turn: dist/ (or DIST) and COMPARE when given. */
const BUILDS = [process.env.DIST || fileURLToPath(new URL("../dist/", import.meta.url)), process.env.COMPARE].filter(Boolean);
const RUNS = Number(process.env.RUNS || 7);
const CUES = Number(process.env.CUES || 2500);
const HOURS = 3;
const WIDTH = Number(process.env.WIDTH || 1280);
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".json": "application/json" };

/** CUES cues spread over three hours, sentences of the length speech gives a cue. */
function transcript() {
  const step = Math.floor((HOURS * 3600_000) / CUES);
  const words = "the council met on tuesday and voted to keep the old cranes where they stand while the weather holds".split(" ");
  const original = Array.from({ length: CUES }, (_, i) => ({
    start: i * step,
    end: i * step + step - 200,
    text: `${i + 1}. ${Array.from({ length: 11 }, (_, k) => words[(i + k) % words.length]).join(" ")}.`,
  }));
  return JSON.stringify({ ok: true, language: "english", duration: HOURS * 3600_000, format: "srt", original, edited: null });
}

/** Serves the build `served.dist` (changed between runs) and the stand-in API. */
function serve(served) {
  const body = transcript();
  const server = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/api/config") return send(res, 200, "application/json", JSON.stringify(CONFIG));
    if (path === "/r/bench/transcript") return send(res, 200, "application/json", body);
    const file = join(served.dist, normalize(path).replace(/^(\.\.[/\\])+/, ""));
    const found = statSync(file, { throwIfNoEntry: false })?.isFile();
    const chosen = found ? file : join(served.dist, "index.html");
    return send(res, 200, TYPES[extname(chosen)] || "application/octet-stream", readFileSync(chosen));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function send(res, status, type, body) {
  res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
  res.end(body);
}

/** Records, in the page, when the first and the last cue appear and the long tasks. */
function probe(last) {
  window.__bench = { longTasks: [] };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__bench.longTasks.push({ start: e.startTime, duration: e.duration });
  }).observe({ type: "longtask", buffered: true });
  new MutationObserver((_, obs) => {
    const b = window.__bench;
    if (!b.firstCue && document.getElementById("cue-text-0")) b.firstCue = performance.now();
    if (!b.allCues && document.getElementById(`cue-text-${last}`)) {
      b.allCues = performance.now();
      obs.disconnect();
    }
  }).observe(document, { childList: true, subtree: true });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Opens the editor once in a fresh context and returns what the page measured. */
async function once(browser, base) {
  const context = await browser.newContext({ viewport: { width: WIDTH, height: 900 } });
  const page = await context.newPage();
  await page.addInitScript(probe, CUES - 1);
  await page.goto(`${base}/r/bench/edit`);
  await page.waitForFunction(() => window.__bench?.allCues, null, { timeout: 60000 });
  await page.waitForTimeout(300);
  const r = await page.evaluate(() => {
    const b = window.__bench;
    const fetched = performance.getEntriesByType("resource").find((e) => e.name.endsWith("/r/bench/transcript"));
    const after = b.longTasks.filter((t) => t.start + t.duration > b.firstCue).map((t) => t.duration);
    // How compact: the median height of the cues in view, and the page's height once
    // every cue has been laid out (content-visibility estimates the others until then).
    const rows = [...document.querySelectorAll(".cue")].slice(0, 20).map((el) => el.getBoundingClientRect().height);
    return { transcript: fetched?.responseEnd, firstCue: b.firstCue, allCues: b.allCues, longestTaskAfter: after.length ? Math.max(...after) : 0, cueHeight: rows.sort((x, y) => x - y)[10] };
  });
  // Finding: the last cue scrolled to and focused from the keyboard's point of view (End of
  // the list), then the page's real height.
  const jump = await page.evaluate(async (last) => {
    const t0 = performance.now();
    const box = document.getElementById(`cue-text-${last}`);
    box.scrollIntoView({ block: "center" });
    box.focus();
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    const shown = box.getBoundingClientRect();
    const jumpToLast = performance.now() - t0;
    for (const el of document.querySelectorAll(".cue")) el.style.contentVisibility = "visible"; // real heights, not estimates
    return { jumpToLast, lastInView: shown.top >= 0 && shown.bottom <= innerHeight, pageHeight: document.documentElement.scrollHeight };
  }, CUES - 1);
  if (!jump.lastInView) throw new Error("the last cue is not in view after scrolling to it");
  r.jumpToLast = jump.jumpToLast;
  r.pageHeight = jump.pageHeight;
  if (process.env.WATERFALL) {
    const rows = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => `${Math.round(e.startTime)}–${Math.round(e.responseEnd)} ms ${new URL(e.name).pathname}`));
    console.log(rows.join("\n"));
  }
  await context.close();
  return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Math.round(v)]));
}

async function main() {
  const served = { dist: BUILDS[0] };
  const server = await serve(served);
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  const load = loadavg()[0];
  const runs = BUILDS.map(() => []);
  try {
    for (let i = 0; i < RUNS; i++) {
      for (const [k, dist] of BUILDS.entries()) {
        served.dist = dist;
        runs[k].push(await once(browser, base));
        console.log(`run ${i + 1}, ${dist}: ${JSON.stringify(runs[k].at(-1))}`);
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
  for (const [k, dist] of BUILDS.entries()) {
    const med = Object.fromEntries(Object.keys(runs[k][0]).map((key) => [key, median(runs[k].map((r) => r[key]))]));
    const worst = Math.max(...runs[k].map((r) => r.firstCue));
    console.log(`${dist}: ${CUES} cues, ${RUNS} runs, medians (ms): ${JSON.stringify(med)}, slowest first cue ${worst} ms`);
  }
  console.log(`load average: ${load.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after, on ${availableParallelism()} cores`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
