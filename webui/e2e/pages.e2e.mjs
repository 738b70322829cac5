// Browser test of the pages every paid site has and of what a crawler sees: each page's
// address per language, its server-rendered metadata without JavaScript, a real 404, and
// the legal pages reachable from the footer.
//
//   BASE_URL=http://127.0.0.1:8080 SCREENSHOT_DIR=test-artifacts/screenshots node webui/e2e/pages.e2e.mjs
import { abort, assert, BASE, check, facts, finish, openBrowser, until } from "./harness.mjs";

const HREFLANGS = ["en", "ja", "es", "ru", "zh", "ar", "x-default"];

// The head as the server sent it, read from a page whose scripts never ran.
async function crawl(page, path) {
  const res = await page.goto(`${BASE}${path}`, { waitUntil: "load" });
  const head = await page.evaluate(() => {
    const meta = (sel) => document.head.querySelector(sel)?.getAttribute("content") ?? null;
    return {
      lang: document.documentElement.lang,
      dir: document.documentElement.dir,
      title: document.title,
      description: meta('meta[name="description"]'),
      og: Object.fromEntries([...document.head.querySelectorAll('meta[property^="og:"]')].map((m) => [m.getAttribute("property"), m.content])),
      canonical: document.head.querySelector('link[rel="canonical"]')?.href ?? null,
      alternates: Object.fromEntries([...document.head.querySelectorAll('link[rel="alternate"][hreflang]')].map((l) => [l.hreflang, l.href])),
      robots: meta('meta[name="robots"]'),
      rendered: document.getElementById("root")?.childElementCount ?? -1,
    };
  });
  return { status: res.status(), ...head };
}

async function main() {
  const b = await openBrowser();
  const { page, context, shot, pageErrors } = b;
  try {
    const config = await b.config();
    const crawler = await context.newPage();
    // A crawler without JavaScript: no script is fetched, so only the server's HTML counts.
    await crawler.route("**/*.js", (r) => r.abort());

    await check("crawler: /es/tts is Spanish with its own title, description, og:*, canonical and hreflang", async () => {
      const h = await crawl(crawler, "/es/tts");
      assert(h.status === 200, `status ${h.status}`);
      assert(h.rendered === 0, "scripts ran: this is not a crawler's view");
      assert(h.lang === "es" && h.dir === "ltr", `lang/dir ${h.lang}/${h.dir}`);
      assert(h.title.startsWith("Texto a voz · "), `title ${h.title}`);
      assert(h.description && !/Turn|text to speech/i.test(h.description), `description not Spanish: ${h.description}`);
      assert(h.og["og:title"] === h.title && h.og["og:description"] === h.description, "og:title/description differ from the page's");
      assert(h.og["og:url"] === `${BASE}/es/tts` && h.canonical === `${BASE}/es/tts`, `og:url ${h.og["og:url"]}, canonical ${h.canonical}`);
      assert(h.og["og:image"] === `${BASE}/og.png` && h.og["og:locale"] === "es_ES", `og:image ${h.og["og:image"]}`);
      assert(JSON.stringify(Object.keys(h.alternates).sort()) === JSON.stringify([...HREFLANGS].sort()), `hreflang ${Object.keys(h.alternates)}`);
      for (const [hl, href] of Object.entries(h.alternates)) {
        const want = hl === "en" || hl === "x-default" ? `${BASE}/tts` : `${BASE}/${hl}/tts`;
        assert(href === want, `hreflang ${hl} → ${href}, want ${want}`);
      }
      facts.crawlerEsTts = { title: h.title, description: h.description };
      const img = await crawler.request.get(h.og["og:image"]);
      assert(img.ok() && img.headers()["content-type"] === "image/png", `og:image: ${img.status()}`);
    });

    await check("crawler: each language's /privacy, /terms and /refunds in that language; Arabic right to left", async () => {
      const seen = new Set();
      for (const [prefix, lang] of [["", "en"], ["/ja", "ja"], ["/ru", "ru"], ["/zh", "zh-Hans"], ["/ar", "ar"]]) {
        for (const p of ["/terms", "/privacy", "/refunds"]) {
          const h = await crawl(crawler, prefix + p);
          assert(h.status === 200 && h.lang === lang, `${prefix}${p}: ${h.status} lang ${h.lang}`);
          assert(h.dir === (lang === "ar" ? "rtl" : "ltr"), `${prefix}${p}: dir ${h.dir}`);
          assert(h.canonical === `${BASE}${prefix}${p}` && Object.keys(h.alternates).length === 7, `${prefix}${p}: canonical ${h.canonical}`);
          assert(!seen.has(h.title), `${prefix}${p}: title ${h.title} repeats another page's`);
          seen.add(h.title);
        }
      }
      const privacy = await crawl(crawler, "/privacy");
      assert(privacy.description.includes(`${config.retention.linkDays} days`), `privacy description ${privacy.description}`);
    });

    await check("crawler: unknown routes answer 404, in their language, noindex", async () => {
      for (const [path, lang] of [["/no-such-page", "en"], ["/es/no-such-page", "es"]]) {
        const h = await crawl(crawler, path);
        assert(h.status === 404 && h.lang === lang && h.robots === "noindex" && !h.canonical, `${path}: ${JSON.stringify(h)}`);
      }
    });
    await crawler.close();

    await check("visitor: the footer's contact and version are in the served page", async () => {
      // /api/config is refused: the footer must not need it.
      await page.route("**/api/config", (r) => r.fulfill({ status: 503, body: "{}" }));
      await page.goto(`${BASE}/es/`, { waitUntil: "networkidle" });
      await page.getByText(config.version, { exact: true }).waitFor({ timeout: 5000 });
      const href = await page.locator(".site-footer a[href^='mailto:']").getAttribute("href");
      assert(href === `mailto:${config.contactEmail}`, `contact ${href}`);
      await page.unroute("**/api/config");
    });

    await check("visitor: the legal pages are reachable from the footer, in the page's language", async () => {
      for (const [name, path, h1] of [
        ["Condiciones de servicio", "/es/terms", "Condiciones de servicio"],
        ["Política de privacidad", "/es/privacy", "Política de privacidad"],
        ["Política de reembolsos", "/es/refunds", "Política de reembolsos"],
      ]) {
        await page.locator(".site-footer").getByRole("link", { name }).click();
        await page.waitForURL(`${BASE}${path}`);
        await page.getByRole("heading", { level: 1, name: h1 }).waitFor();
        const t = await page.evaluate(() => ({ title: document.title, canonical: document.querySelector('link[rel="canonical"]')?.href }));
        assert(t.title.startsWith(`${h1} · `) && t.canonical === `${BASE}${path}`, `${path}: ${JSON.stringify(t)}`);
      }
      await page.locator(".site-footer").getByRole("link", { name: "Política de privacidad" }).click();
      const kept = await page.getByTestId("retention").textContent();
      assert(kept.includes(`${config.retention.linkDays} días`), `privacy does not state the link days: ${kept}`);
      await shot("es-privacy");
    });

    await check("visitor: the language selector moves to the language's address", async () => {
      await page.getByTestId("language").selectOption("ru");
      await until(() => page.evaluate(() => location.pathname === "/ru/privacy"), `/ru/privacy, at ${page.url()}`);
      await page.getByRole("heading", { level: 1, name: "Политика конфиденциальности" }).waitFor();
      const s = await page.evaluate(() => ({ lang: document.documentElement.lang, canonical: document.querySelector('link[rel="canonical"]')?.href }));
      assert(s.lang === "ru" && s.canonical === `${BASE}/ru/privacy`, JSON.stringify(s));
      await page.reload({ waitUntil: "networkidle" });
      await page.getByRole("heading", { level: 1, name: "Политика конфиденциальности" }).waitFor();
      await page.getByTestId("language").selectOption("en");
      await until(() => page.evaluate(() => location.pathname === "/privacy"), "/privacy in English");
    });

    await check("visitor: the pay step links the terms and the refund policy", async () => {
      await page.goto(`${BASE}/tts`, { waitUntil: "networkidle" });
      await page.getByPlaceholder("Enter your text here").fill("Hello there, this is a short text.");
      await page.getByLabel("E-mail", { exact: true }).fill("visitor@example.com");
      await page.getByLabel("Verify e-mail").fill("visitor@example.com");
      await until(async () => (await page.getByTestId("checkout-notice").count()) > 0, "the checkout notice", 10000);
      const links = await page.getByTestId("checkout-notice").locator("a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
      assert(["/terms", "/refunds", "/privacy"].every((p) => links.includes(p)), `notice links ${links}`);
      assert(pageErrors.length === 0, `page errors: ${pageErrors.join("; ")}`);
    });
  } catch (err) {
    abort(err);
  } finally {
    await b.close();
  }
  finish();
}

main();
