// Browser checks of the link page a delivery letter gives (/r/{token}), after a
// transcription journey: what the file is and when it expires, with a countdown; the
// download and the other formats (made from the kept segments, at no charge) as form
// posts; "delete now", asked first; then the 410 pages of the page and of /d/{token}, and a 404 page
// in the visitor's language for an unknown link. None of it answers a browser with JSON.
import { assert, BASE, check, facts } from "./harness.mjs";

/** Clicks `locator` (a download button of the link page) and returns {text, name} of the file. */
export async function downloadBy(page, locator) {
  const [dl] = await Promise.all([page.waitForEvent("download", { timeout: 30000 }), locator.click()]);
  const { readFileSync } = await import("node:fs");
  return { text: readFileSync(await dl.path(), "utf8"), name: dl.suggestedFilename() };
}

/** `link` is the /d/{token} download link of a delivered SRT transcript (order in English). */
export async function linkPageChecks(browser, link) {
  const { page, shot, pageErrors, consoleLines } = browser;
  const download = new URL(link, BASE).pathname;
  const pageURL = `${BASE}${download.replace(/^\/d\//, "/r/")}`;

  await check("the link page says what the file is and when it expires, with a countdown", async () => {
    const res = await page.goto(pageURL, { waitUntil: "load" });
    assert(res.status() === 200, `status ${res.status()}`);
    await page.getByRole("heading", { level: 1, name: "Your file" }).waitFor();
    const what = await page.getByTestId("link-what").innerText();
    for (const want of ["Service: audio transcription", "Format: SRT", "Length: 0:0", "Amount charged: €"]) {
      assert(what.includes(want), `"${want}" not in ${JSON.stringify(what)}`);
    }
    assert(await page.getByText(/This link is valid until .* UTC\./).isVisible(), "no expiry date");
    const left = await page.getByTestId("link-left").innerText();
    // Delivered moments ago: 9 days 23 hours and some minutes are left of the 10 days.
    assert(/^9 d 23 h \d+ min$/.test(left), `countdown ${left}`);
    // The countdown's script runs under the page's Content-Security-Policy (allowed by hash).
    await page.locator("[data-testid=link-left][data-ticking]").waitFor({ timeout: 3000 });
    const blocked = consoleLines.filter((l) => l.includes("Content Security Policy"));
    assert(blocked.length === 0, blocked.join(" | "));
    facts.linkPage = { what, left };
    await shot("en-link-page");
  });

  await check("its download button hands over the SRT; other formats come at no charge", async () => {
    const srt = await downloadBy(page, page.getByTestId("link-download"));
    assert(/^1\r?\n00:00:00,000 --> /.test(srt.text) && srt.name.endsWith(".srt"), `download ${srt.name}`);
    assert((await page.locator("button[data-format=srt]").count()) === 0, "the ordered format is offered again");
    const vtt = await downloadBy(page, page.locator("button[data-format=vtt]"));
    assert(vtt.text.startsWith("WEBVTT") && vtt.name.endsWith(".vtt"), `vtt ${vtt.name}: ${vtt.text.slice(0, 40)}`);
    const text = await downloadBy(page, page.locator("button[data-format=text]"));
    assert(text.name.endsWith(".txt") && text.text.trim().length > 0 && !text.text.includes("-->"), `text ${text.name}`);
    const verbose = await downloadBy(page, page.locator("button[data-format=verbose_json]"));
    assert(Array.isArray(JSON.parse(verbose.text).segments), "verbose_json without segments");
    facts.linkFormats = [srt.name, vtt.name, text.name, verbose.name];
  });

  await check("in Arabic at 320 px the link page is right to left without overflow", async () => {
    await page.setViewportSize({ width: 320, height: 800 });
    await page.goto(`${pageURL}?lang=ar`, { waitUntil: "load" });
    assert((await page.locator("html").getAttribute("dir")) === "rtl", "not rtl");
    const w = await page.evaluate(() => document.documentElement.scrollWidth);
    await shot("ar-link-page-320px");
    await page.setViewportSize({ width: 1280, height: 900 });
    assert(w <= 320, `page is ${w}px wide`);
  });

  await check("in Arabic the countdown's units take their plural forms, also as it ticks", async () => {
    await page.goto(`${pageURL}?lang=ar`, { waitUntil: "load" });
    await page.locator("[data-testid=link-left][data-ticking]").waitFor({ timeout: 3000 });
    const left = await page.getByTestId("link-left").innerText();
    assert(/^9 أيام و23 ساعة و\d+ (دقيقة|دقائق|دقيقتان)$/.test(left), `countdown ${left}`);
  });

  await check("the link page wears the site's header and footer", async () => {
    await page.goto(pageURL, { waitUntil: "load" });
    assert((await page.locator(".site-header .brand-title").textContent()) === "Parla", "no site header");
    assert(await page.locator(".site-footer a[href='/privacy']").isVisible(), "no footer link to the privacy policy");
  });

  await check("delete now asks first, then erases the file and says so; the page and /d/ then answer 410 pages", async () => {
    await page.goto(pageURL, { waitUntil: "load" });
    await page.getByTestId("link-delete").click();
    await page.getByRole("heading", { level: 1, name: "Delete this file?" }).waitFor();
    await page.getByTestId("link-keep").click();
    await page.getByRole("heading", { level: 1, name: "Your file" }).waitFor();
    await page.getByTestId("link-delete").click();
    await page.getByTestId("link-delete-confirm").click();
    await page.getByRole("heading", { level: 1, name: "Deleted" }).waitFor();
    assert((await page.getByTestId("link-notice").innerText()).includes("erased from our servers"), "no word of erasure");
    await shot("en-link-deleted");
    for (const url of [pageURL, `${BASE}${download}`]) {
      const res = await page.goto(url, { waitUntil: "load" });
      assert(res.status() === 410, `${url}: status ${res.status()}`);
      assert((res.headers()["content-type"] || "").startsWith("text/html"), `${url}: not HTML`);
      await page.getByRole("heading", { level: 1, name: "This link has expired" }).waitFor();
    }
    await shot("en-link-expired");
  });

  await check("an unknown link gets a 404 page in the visitor's language", async () => {
    const res = await page.goto(`${BASE}/d/no-such-token?lang=ru`, { waitUntil: "load" });
    assert(res.status() === 404, `status ${res.status()}`);
    await page.getByRole("heading", { level: 1, name: "Такой ссылки нет" }).waitFor();
    assert((await page.locator("html").getAttribute("lang")) === "ru", "lang");
  });

  await check("no uncaught errors on the link pages", async () => {
    assert(pageErrors.length === 0, pageErrors.join(" | "));
  });
}
