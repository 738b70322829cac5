// Lighthouse 12.2.3 (13 needs Node 22) on the pages of issue 32, mobile emulation, in every
// interface language: each page RUNS times (alternated, page by page), medians printed with
// the load average, which on a shared 2-core machine says as much as the scores.
//
//   BASE_URL=http://127.0.0.1:8080 node scripts/lighthouse.mjs     (make lighthouse starts
//   the app on its embedded defaults and runs this; RUNS=3 PAGES=/,/tts,/sst,/vtt
//   LANGS=en,ja,es,ru,zh,ar CHROMIUM=/usr/bin/chromium)
//
// Fails when a page's median layout shift passes 0.02, or, with STRICT=1 (a quiet machine),
// when its median total blocking time reaches 200 ms or its performance score is under 90.
// Blocking time and the score measure the machine as much as the page where other work
// shares the cores, so they are reported, not asserted, by default.
//
// Lighthouse is not one of the app's packages (it is large and only this script uses it):
// it is installed on first use into $LIGHTHOUSE_DIR (default ~/.cache/parla-lighthouse).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { loadavg, homedir } from "node:os";
import { join } from "node:path";

const VERSION = "12.2.3";
const BASE = (process.env.BASE_URL || "http://127.0.0.1:8080").replace(/\/$/, "");
const RUNS = Number(process.env.RUNS || 3);
const PAGES = (process.env.PAGES || "/,/tts,/sst,/vtt").split(",");
const LANGS = (process.env.LANGS || "en,ja,es,ru,zh,ar").split(",");
const STRICT = process.env.STRICT === "1";
const DIR = process.env.LIGHTHOUSE_DIR || join(homedir(), ".cache", "parla-lighthouse");
const CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run";

/** The lighthouse command, installed at VERSION on first use. */
function lighthouseBin() {
  const bin = join(DIR, "node_modules", ".bin", "lighthouse");
  const pkg = join(DIR, "node_modules", "lighthouse", "package.json");
  if (!existsSync(pkg) || JSON.parse(readFileSync(pkg, "utf8")).version !== VERSION) {
    mkdirSync(DIR, { recursive: true });
    console.log(`installing lighthouse@${VERSION} into ${DIR}`);
    execFileSync("npm", ["install", "--prefix", DIR, "--no-audit", "--no-fund", "--loglevel=error", `lighthouse@${VERSION}`], { stdio: "inherit" });
  }
  return bin;
}

/** One Lighthouse run of url: the figures issue 32 names. */
function measure(bin, url) {
  const out = execFileSync(
    bin,
    [url, "--quiet", "--only-categories=performance", "--output=json", "--output-path=stdout", `--chrome-flags=${CHROME_FLAGS}`],
    { env: { ...process.env, CHROME_PATH: process.env.CHROMIUM || "/usr/bin/chromium" }, maxBuffer: 64 << 20, timeout: 180_000 },
  );
  const r = JSON.parse(out);
  const a = r.audits;
  return {
    score: Math.round(r.categories.performance.score * 100),
    cls: a["cumulative-layout-shift"].numericValue,
    tbt: a["total-blocking-time"].numericValue,
    fcp: a["first-contentful-paint"].numericValue,
    lcp: a["largest-contentful-paint"].numericValue,
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function main() {
  const bin = lighthouseBin();
  const urls = LANGS.flatMap((l) => PAGES.map((p) => `${BASE}${l === "en" ? "" : `/${l}`}${l !== "en" && p === "/" ? "" : p}`));
  const runs = Object.fromEntries(urls.map((u) => [u, []]));
  const load = loadavg()[0];
  for (let i = 0; i < RUNS; i++) {
    for (const u of urls) {
      runs[u].push(measure(bin, u));
      console.log(`run ${i + 1} ${u}: ${JSON.stringify(runs[u].at(-1), (k, v) => (typeof v === "number" ? Math.round(v * 1000) / 1000 : v))}`);
    }
  }
  const failures = [];
  for (const u of urls) {
    const m = Object.fromEntries(Object.keys(runs[u][0]).map((k) => [k, median(runs[u].map((r) => r[k]))]));
    console.log(`${u}: median of ${RUNS}: performance ${m.score}, layout shift ${m.cls.toFixed(3)}, blocking ${Math.round(m.tbt)} ms, FCP ${Math.round(m.fcp)} ms, LCP ${Math.round(m.lcp)} ms`);
    if (m.cls > 0.02) failures.push(`${u}: layout shift ${m.cls.toFixed(3)} > 0.02`);
    if (STRICT && m.tbt >= 200) failures.push(`${u}: blocking time ${Math.round(m.tbt)} ms >= 200`);
    if (STRICT && m.score < 90) failures.push(`${u}: performance ${m.score} < 90`);
  }
  console.log(`load average: ${load.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after`);
  if (failures.length) {
    console.error(`lighthouse: FAIL\n${failures.join("\n")}`);
    process.exit(1);
  }
  console.log(`lighthouse: ok (${STRICT ? "layout shift, blocking time and score" : "layout shift; blocking time and score reported"})`);
}

main();
