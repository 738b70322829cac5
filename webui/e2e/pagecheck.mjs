// What the browser tests check of a page as it loads: its layout shifts (from the first
// byte, the visitor's own left out) and axe-core's serious and critical problems.
import { readFileSync } from "node:fs";
import { BASE } from "./harness.mjs";

const AXE = readFileSync(new URL("../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");

/**
 * axe-core's serious and critical violations on the page, label-in-name included (WCAG
 * 2.5.3: off by default in axe, as an experimental rule).
 */
export async function accessibilityProblems(page) {
  await page.evaluate(AXE); // through the debugger: the page's script-src does not apply
  return page.evaluate(async () => {
    const result = await window.axe.run(document, { rules: { "label-content-name-mismatch": { enabled: true } }, resultTypes: ["violations"] });
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}, ${v.nodes.length}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
  });
}

/** Records, from the page's first byte, every layout shift not caused by the visitor. */
export function recordShifts() {
  window.__shifts = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.hadRecentInput) continue;
      const what = e.sources.map((src) => `${src.node?.nodeName?.toLowerCase() || "?"}.${src.node?.className || ""} ${Math.round(src.previousRect.y)}→${Math.round(src.currentRect.y)}`);
      window.__shifts.push({ value: e.value, what: what.join(", ") });
    }
  }).observe({ type: "layout-shift", buffered: true });
}

/**
 * A first visit (no remembered language: an unprefixed address would switch to it) to path
 * at width, in a page of its own; look(page) runs once it has loaded. Returns the layout
 * shift of the load (the sum of every shift, at least the cumulative layout shift
 * Lighthouse reports) with what moved, axe-core's serious problems and the page's errors.
 * base: the server (default BASE_URL).
 */
export async function firstVisit(context, path, width, look = async () => {}, base = BASE) {
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  try {
    await page.setViewportSize({ width, height: width < 600 ? 700 : 900 });
    await page.addInitScript(() => localStorage.clear());
    await page.addInitScript(recordShifts);
    await page.goto(`${base}${path}`, { waitUntil: "networkidle" });
    await page.waitForTimeout(500);
    const shifts = await page.evaluate(() => window.__shifts);
    await look(page);
    return {
      shift: shifts.reduce((sum, e) => sum + e.value, 0),
      moved: shifts.map((e) => `${e.value.toFixed(3)}: ${e.what}`),
      problems: await accessibilityProblems(page),
      errors,
    };
  } finally {
    await page.close();
  }
}
