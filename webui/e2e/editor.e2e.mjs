// Browser test of the transcript editor (/r/{token}/edit, issue 23) against the real server
// and its stand-in engine (fake-openai.mjs, which hears CLIP_TEXT in any audio as two
// cues, one per sentence, spread over the recording):
//
//   BASE_URL=http://127.0.0.1:8080 SCREENSHOT_DIR=test-artifacts/screenshots node webui/e2e/editor.e2e.mjs
//
// An audio-to-text order is placed and paid over the API (the sst journey walks the order
// form itself); then, as the visitor: the link page's Edit link, the recording picked from
// disk and played while the highlight follows it, a cue clicked to seek, a word edited, a
// cue split and merged, one shifted, a word replaced everywhere, undo and redo, a reload
// that keeps the unsaved edits, Save, and every format of the link page carrying the edits
// (the vtt through the W3C WebVTT parser, the srt through a strict reader, both within the
// readability rules); a second browser sees the saved edit and goes back to the original by
// keyboard alone; the same page in Arabic at 320 px, by keyboard alone; a save from a tab
// opened before another tab saved is refused (409 edit_conflict) with the visitor's text
// kept, the newer version loaded on request and undone back to the visitor's, which then
// saves; "Delete now" erases the edit with the result. Against a second server whose engine tells speakers
// apart (DIARIZE_BASE_URL, started by .ci/e2e.sh): the speakers shown, one renamed
// everywhere, and every format naming it (<v Dr. Ortega> in vtt, "Dr. Ortega: " in srt and text).
import { readFileSync, rmSync } from "node:fs";
import webvtt from "webvtt-parser";
import { abort, assert, BASE, check, EMAIL, engineRequests, facts, finish, openBrowser, until } from "./harness.mjs";
import { downloadBy } from "./linkpage.mjs";
import { makeSpeechMp3, tempDir } from "./media.mjs";

const ar = JSON.parse(readFileSync(new URL("../src/locales/ar/translation.json", import.meta.url), "utf8")).editor;
const en = JSON.parse(readFileSync(new URL("../src/locales/en/translation.json", import.meta.url), "utf8"));

/** The server whose engine tells speakers apart, if any. */
const DIARIZE = (process.env.DIARIZE_BASE_URL || "").replace(/\/$/, "");

/** The readability limits every language's subtitles keep (providers/transcript/rules.go). */
const RULES = { lines: 2, lineChars: 42, maxSeconds: 7, minGapSeconds: 0.083 };

/** Orders the transcript of `mp3` as srt over the API of `base`, pays on the test checkout, and returns the /d/{token} token. */
async function orderTranscript(request, mp3, base = BASE) {
  const up = await request.post(`${base}/services/sst/uploadaudio`, {
    multipart: { file: { name: "talk.mp3", mimeType: "audio/mpeg", buffer: readFileSync(mp3) } },
  });
  const uploaded = await up.json();
  assert(up.ok() && uploaded.file?.path, `upload: ${up.status()} ${JSON.stringify(uploaded)}`);
  const order = { filePath: uploaded.file.path, fileName: "talk.mp3", response_format: "srt", email: EMAIL, emailVerify: EMAIL, locale: "en", language: "en" };
  const co = await request.post(`${base}/payment/sst/create-checkout-session`, { data: { order } });
  const session = await co.json();
  assert(co.ok() && session.url, `checkout: ${co.status()} ${JSON.stringify(session)}`);
  const paid = await request.post(new URL(`${session.url}/pay`, base).href, { maxRedirects: 0 });
  assert(paid.status() === 303, `pay: ${paid.status()}`);
  const link = await until(async () => {
    const r = await request.post(`${base}/services/sst`, { data: { sessionId: session.sessionId } });
    assert(r.status() === 200 || r.status() === 202, `result: ${r.status()}`);
    return r.status() === 200 && (await r.json()).data.data;
  }, "the delivered link", 120000, 500);
  return new URL(link, base).pathname.split("/")[2];
}

/** Seconds of an srt or vtt time stamp. */
const seconds = (stamp) => {
  const [h, m, s] = stamp.replace(",", ".").split(":").map(Number);
  return h * 3600 + m * 60 + s;
};

/** Reads an SRT file strictly: numbered blocks from 1, a time line, one or more text lines. */
function parseSrt(text) {
  assert(!text.startsWith("\ufeff"), "srt starts with a byte-order mark");
  const blocks = text.replace(/\r\n/g, "\n").replace(/\n+$/, "").split(/\n\n/);
  return blocks.map((block, i) => {
    const [n, time, ...lines] = block.split("\n");
    assert(n === String(i + 1), `srt block ${i + 1} is numbered ${JSON.stringify(n)}`);
    const m = /^(\d\d:\d\d:\d\d,\d{3}) --> (\d\d:\d\d:\d\d,\d{3})$/.exec(time || "");
    assert(m, `srt block ${n}: time line ${JSON.stringify(time)}`);
    assert(lines.length >= 1 && lines.every((l) => l.trim()), `srt block ${n}: text ${JSON.stringify(lines)}`);
    return { start: seconds(m[1]), end: seconds(m[2]), lines };
  });
}

/** Reads a WebVTT file with the W3C parser, which must report no error; `voice` is a cue's voice span's name. */
function parseVtt(text) {
  const { cues, errors } = new webvtt.WebVTTParser().parse(text, "subtitles");
  assert(errors.length === 0, `WebVTT parser: ${errors.map((e) => `line ${e.line}: ${e.message}`).join("; ")}`);
  return cues.map((c) => {
    const span = c.tree.children.find((n) => n.name === "v");
    return { start: c.startTime, end: c.endTime, lines: c.text.split("\n"), voice: span?.value ?? "" };
  });
}

/** Checks cues against the readability rules; returns their joined text. */
function readable(cues, what) {
  assert(cues.length > 0, `${what}: no cues`);
  cues.forEach((c, i) => {
    const at = `${what} cue ${i + 1}`;
    assert(c.start >= 0 && c.end > c.start && c.end - c.start <= RULES.maxSeconds + 1e-3, `${at}: ${c.start} → ${c.end}`);
    assert(c.lines.length <= RULES.lines, `${at}: ${c.lines.length} lines`);
    for (const l of c.lines) assert([...l.replace(/<[^>]*>/g, "")].length <= RULES.lineChars, `${at}: line of ${l.length}: ${l}`);
    if (i > 0) assert(c.start - cues[i - 1].end >= RULES.minGapSeconds - 1e-3, `${at}: ${c.start - cues[i - 1].end} s after the previous`);
  });
  return cues.flatMap((c) => c.lines).join(" ");
}

/** The link page's formats, each parsed: {srt, vtt, text, json} as plain text for searching, and the vtt cues' voices. */
async function formatsOf(page, pageURL) {
  await page.goto(pageURL, { waitUntil: "load" });
  const srt = await downloadBy(page, page.getByTestId("link-download"));
  const vtt = await downloadBy(page, page.locator("button[data-format=vtt]"));
  const text = await downloadBy(page, page.locator("button[data-format=text]"));
  const json = await downloadBy(page, page.locator("button[data-format=verbose_json]"));
  assert(srt.name.endsWith(".srt") && vtt.name.endsWith(".vtt") && text.name.endsWith(".txt"), `names ${srt.name} ${vtt.name} ${text.name}`);
  const vttCues = parseVtt(vtt.text);
  return {
    srt: readable(parseSrt(srt.text), "srt"),
    vtt: readable(vttCues, "vtt"),
    text: text.text.replace(/\s+/g, " "),
    json: JSON.parse(json.text).segments.map((s) => s.text.trim()).join(" "),
    voices: vttCues.map((c) => c.voice),
  };
}

/** The cues' texts as the editor shows them. */
const texts = (page) => page.locator("textarea[id^=cue-text-]").evaluateAll((els) => els.map((e) => e.value));

/** Presses Tab until the focused element matches `selector`; fails after `max` presses. */
async function tabTo(page, selector, max = 120) {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    if (await page.evaluate((s) => document.activeElement?.matches(s), selector)) return i + 1;
  }
  throw new Error(`${selector} not reached by ${max} Tab presses`);
}

/** The editor's status line. */
const status = (page) => page.getByTestId("editor-status").innerText();

/** Answers the editor's "Back to the original?" confirmation; any other dialog is an error. */
function confirmOriginal(b) {
  b.page.removeAllListeners("dialog");
  b.page.on("dialog", (d) => {
    if (d.type() === "confirm" && /original|الأصل/i.test(d.message())) return d.accept();
    b.pageErrors.push(`unexpected dialog: ${d.message()}`);
    return d.dismiss();
  });
}

async function main() {
  const dir = tempDir("parla-editor-e2e-");
  const mp3 = makeSpeechMp3(dir);
  const b = await openBrowser();
  const { page, shot, pageErrors } = b;
  confirmOriginal(b);
  let second;
  try {
    let pageURL = "";
    let token = "";
    await check("an audio-to-text order is delivered (srt)", async () => {
      token = await orderTranscript(page.request, mp3);
      pageURL = `${BASE}/r/${token}`;
    });
    if (!token) throw new Error("no delivered order: cannot go on");

    await check("the link page's Edit link opens the editor with the cues", async () => {
      await page.goto(pageURL, { waitUntil: "load" });
      await page.getByTestId("link-edit").click();
      await page.waitForURL(`${BASE}/r/${token}/edit`);
      await page.getByRole("heading", { level: 1, name: "Correct the transcript" }).waitFor();
      const got = await texts(page);
      assert(got.join("|") === "Hello from the test clip.|It was made for the Parla browser test.", JSON.stringify(got));
      await shot("en-editor");
    });

    await check("the recording picked from disk plays and the highlight follows it", async () => {
      await page.getByTestId("editor-file").setInputFiles(mp3);
      const src = await page.getByTestId("editor-player").getAttribute("src");
      assert(src?.startsWith("blob:"), `not an object URL: ${src}`);
      await page.evaluate(() => {
        window.__seen = [];
        const list = document.querySelector(".editor-cues");
        new MutationObserver(() => {
          const i = [...list.children].findIndex((li) => li.classList.contains("current"));
          if (i >= 0 && window.__seen.at(-1) !== i) window.__seen.push(i);
        }).observe(list, { subtree: true, attributes: true, attributeFilter: ["class"] });
      });
      await page.locator("#cue-text-0").focus();
      await page.keyboard.press("Alt+KeyK");
      await until(() => page.evaluate(() => document.querySelector("[data-testid=editor-player]").ended), "the end of the recording", 30000, 200);
      const seen = await page.evaluate(() => window.__seen);
      facts.editorHighlights = seen;
      assert(seen.join(",") === "0,1", `highlighted cues ${JSON.stringify(seen)}`);
    });

    await check("clicking a cue's time seeks there and highlights it", async () => {
      const time = page.locator("#cue-1 .cue-time");
      await time.click();
      const at = await page.evaluate(() => document.querySelector("[data-testid=editor-player]").currentTime);
      const shown = seconds(`0:${(await time.innerText()).split("–")[0].trim()}`);
      assert(Math.abs(at - shown) <= 0.06, `player at ${at} s, cue starts at ${shown} s`);
      assert((await page.locator("#cue-1").getAttribute("aria-current")) === "true", "cue 2 not highlighted");
    });

    await check("edit a word, split at the cursor, merge with the next, shift one cue", async () => {
      await page.locator("#cue-text-0").fill("Hi from the test clip.");
      await page.locator("#cue-text-1").click();
      await page.keyboard.press("Control+Home");
      for (let i = 0; i < "It was made ".length; i++) await page.keyboard.press("ArrowRight");
      await page.getByTestId("editor-split").click();
      let got = await texts(page);
      assert(got.join("|") === "Hi from the test clip.|It was made|for the Parla browser test.", `split: ${JSON.stringify(got)}`);
      await page.locator("#cue-text-0").click();
      await page.getByTestId("editor-merge").click();
      got = await texts(page);
      assert(got.join("|") === "Hi from the test clip. It was made|for the Parla browser test.", `merge: ${JSON.stringify(got)}`);
      const startOf = async () => seconds(`0:${(await page.locator("#cue-1 .cue-time").innerText()).split("–")[0].trim()}`);
      const before = await startOf();
      await page.locator("#cue-text-1").click();
      await page.getByLabel("Shift by (seconds)").fill("-0.5");
      await page.getByRole("button", { name: "Shift this cue" }).click();
      const after = await startOf();
      assert(Math.abs(before - after - 0.5) < 0.01, `shifted from ${before} to ${after}`);
    });

    await check("find and replace everywhere, then undo and redo by keys", async () => {
      await page.getByTestId("editor-find").fill("test");
      await page.getByTestId("editor-replace").fill("demo");
      await page.getByTestId("editor-replace-all").click();
      await page.getByText("Replacements: 2").waitFor();
      const replaced = "Hi from the demo clip. It was made|for the Parla browser demo.";
      assert((await texts(page)).join("|") === replaced, `replace: ${await texts(page)}`);
      await page.locator("#cue-text-1").focus();
      await page.keyboard.press("Control+KeyZ");
      assert((await texts(page)).join("|") === "Hi from the test clip. It was made|for the Parla browser test.", `undo: ${await texts(page)}`);
      await page.keyboard.press("Control+KeyY");
      assert((await texts(page)).join("|") === replaced, `redo: ${await texts(page)}`);
    });

    let edited = [];
    await check("a reload keeps the unsaved edits", async () => {
      edited = await texts(page);
      await until(() => page.evaluate((t) => (localStorage.getItem(`edit:${t}`) || "").includes("demo clip"), token), "the draft in local storage", 5000, 100);
      await page.reload({ waitUntil: "load" });
      await page.locator("#cue-text-1").waitFor();
      assert((await texts(page)).join("|") === edited.join("|"), `after reload: ${await texts(page)}`);
      assert((await status(page)).includes("Your unsaved changes from before are back."), await status(page));
    });

    await check("Save stores the edit; the draft is dropped", async () => {
      await page.getByTestId("editor-save").click();
      await until(async () => (await status(page)).startsWith("Saved."), "the saved notice", 10000, 100);
      await until(() => page.evaluate((t) => localStorage.getItem(`edit:${t}`) === null, token), "the draft dropped", 5000, 100);
      await shot("en-editor-saved");
    });

    await check("every format on the link page serves the edited text, valid and readable", async () => {
      const f = await formatsOf(page, pageURL);
      facts.editedFormats = f;
      for (const [name, got] of Object.entries(f)) {
        if (name === "voices") continue;
        for (const want of ["Hi from the demo clip.", "It was made", "for the Parla browser demo."]) assert(got.includes(want), `${name} lacks "${want}": ${got}`);
        assert(!got.includes("Hello"), `${name} still has the original: ${got}`);
      }
    });

    second = await openBrowser();
    confirmOriginal(second);
    await check("a second browser sees the saved edit through the link", async () => {
      await second.page.goto(`${BASE}/r/${token}/edit`, { waitUntil: "load" });
      await second.page.locator("#cue-text-1").waitFor();
      assert((await texts(second.page)).join("|") === edited.join("|"), `second device: ${await texts(second.page)}`);
      assert((await status(second.page)).includes("You are editing your saved version."), await status(second.page));
    });

    await check("Back to the original, by keyboard alone, restores every format", async () => {
      await tabTo(second.page, "[data-testid=editor-original]");
      await second.page.keyboard.press("Enter");
      await until(async () => (await status(second.page)).includes("The original transcript is back."), "the reverted notice", 10000, 100);
      const f = await formatsOf(second.page, pageURL);
      for (const [name, got] of Object.entries(f)) {
        if (name !== "voices") assert(got.includes("Hello from the test clip.") && !got.includes("demo"), `${name} after reverting: ${got}`);
      }
    });

    await check("in Arabic at 320 px, by keyboard alone: Edit link, edit, save; no sideways scroll", async () => {
      const p = second.page;
      await p.setViewportSize({ width: 320, height: 700 });
      await p.goto(`${pageURL}?lang=ar`, { waitUntil: "load" });
      await tabTo(p, "[data-testid=link-edit]");
      await p.keyboard.press("Enter");
      await p.waitForURL(`${BASE}/ar/r/${token}/edit`);
      await p.locator("#cue-text-1").waitFor();
      assert((await p.locator("html").getAttribute("dir")) === "rtl", "not rtl");
      await p.getByRole("heading", { level: 1, name: ar.title }).waitFor();
      await tabTo(p, "#cue-text-0");
      await p.keyboard.press("End");
      await p.keyboard.type(" مرحبا");
      await p.keyboard.press("Alt+ArrowDown");
      assert(await p.evaluate(() => document.activeElement?.id === "cue-text-1"), "Alt+↓ did not reach the next cue");
      await p.keyboard.press("Control+KeyS");
      await until(async () => (await status(p)).startsWith(ar.saved.split(".")[0]), "the Arabic saved notice", 10000, 100);
      const width = await p.evaluate(() => document.documentElement.scrollWidth);
      facts.editorArabicWidth = width;
      await second.shot("ar-editor-320px");
      assert(width <= 320, `the page is ${width}px wide`);
      const r = await p.request.get(`${BASE}/d/${token}?format=text`);
      assert((await r.text()).includes("Hello from the test clip. مرحبا"), "the Arabic edit is not served");
      await p.setViewportSize({ width: 1280, height: 900 });
    });

    await check("a save from a tab that another tab saved over is refused, keeps its text, and wins after loading the newer version", async () => {
      const stale = "Typed in the stale tab.";
      const other = "Saved from the other tab.";
      const served = async () => (await page.request.get(`${BASE}/d/${token}?format=text`)).text();
      await page.goto(`${BASE}/r/${token}/edit`, { waitUntil: "load" });
      await page.locator("#cue-text-1").waitFor();
      const p = second.page;
      await p.goto(`${BASE}/r/${token}/edit`, { waitUntil: "load" });
      await p.locator("#cue-text-0").fill(other);
      await p.getByTestId("editor-save").click();
      await until(async () => (await served()).includes(other), "the other tab's save", 10000, 100);

      await page.locator("#cue-text-0").fill(stale);
      await page.getByTestId("editor-save").click();
      const note = page.getByTestId("error");
      await note.waitFor();
      assert((await note.getAttribute("data-code")) === "edit_conflict", `the refusal: ${await note.getAttribute("data-code")}`);
      assert((await note.innerText()) === en.errors.edit_conflict, `the message: ${await note.innerText()}`);
      assert((await page.locator("#cue-text-0").inputValue()) === stale, "the visitor's text was lost");
      assert((await served()).includes(other) && !(await served()).includes(stale), `the stale save changed the link: ${await served()}`);
      await page.getByTestId("editor-load-newer").scrollIntoViewIfNeeded();
      await shot("en-editor-conflict");

      await page.getByTestId("editor-load-newer").click();
      await until(async () => (await status(page)).includes(en.editor.newerLoaded), "the newer version", 10000, 100);
      assert((await page.locator("#cue-text-0").inputValue()) === other, `after loading: ${await page.locator("#cue-text-0").inputValue()}`);
      await page.locator("#cue-text-0").focus();
      await page.keyboard.press("Control+KeyZ");
      assert((await page.locator("#cue-text-0").inputValue()) === stale, "undo did not bring the visitor's text back");
      await page.getByTestId("editor-save").click();
      await until(async () => (await status(page)).startsWith("Saved."), "the saved notice", 10000, 100);
      assert((await served()).includes(stale), `after saving over the newer version: ${await served()}`);
    });

    await check("Delete now erases the edit with the result", async () => {
      await page.goto(pageURL, { waitUntil: "load" });
      await page.getByTestId("link-delete").click();
      await page.getByTestId("link-delete-confirm").click(); // the confirmation step erases
      await page.getByRole("heading", { level: 1, name: "Deleted" }).waitFor();
      const r = await page.request.get(`${BASE}/r/${token}/transcript`);
      assert(r.status() === 410 && (await r.json()).error?.code === "link_expired", `transcript after delete: ${r.status()}`);
      const ed = await page.goto(`${BASE}/r/${token}/edit`, { waitUntil: "load" });
      assert(ed.status() === 410, `editor after delete: ${ed.status()}`);
    });

    await check("an engine that tells speakers apart: the editor shows them, renames one everywhere, every format names it", async () => {
      if (!DIARIZE) return console.log("      (no DIARIZE_BASE_URL: not checked)");
      const tok = await orderTranscript(page.request, mp3, DIARIZE);
      const heard = (await engineRequests())?.at(-1);
      assert(!heard || (heard.format === "diarized_json" && heard.chunking === "auto"), `the engine was asked ${JSON.stringify(heard)}`);
      await page.goto(`${DIARIZE}/r/${tok}/edit`, { waitUntil: "load" });
      const badges = () => page.getByTestId("cue-speaker").allInnerTexts();
      await page.locator("#cue-text-1").waitFor();
      assert((await badges()).join("|") === "A|B", `speakers ${await badges()}`);
      await page.getByLabel("New name for A").fill("Dr. Ortega");
      await page.keyboard.press("Enter");
      assert((await badges()).join("|") === "Dr. Ortega|B", `renamed ${await badges()}`);
      await shot("en-editor-speakers");
      await page.getByTestId("editor-save").click();
      await until(async () => (await status(page)).startsWith("Saved."), "the saved notice", 10000, 100);
      const f = await formatsOf(page, `${DIARIZE}/r/${tok}`);
      facts.editorSpeakers = f;
      assert(f.voices.join("|") === "Dr. Ortega|B", `vtt voices ${JSON.stringify(f.voices)}`);
      for (const name of ["srt", "text"]) {
        assert(f[name].includes("Dr. Ortega: Hello from the test clip.") && f[name].includes("B: It was made"), `${name}: ${f[name]}`);
      }
    });

    await check("no uncaught errors or unexpected dialogs", async () => {
      const all = [...pageErrors, ...second.pageErrors];
      assert(all.length === 0, all.join(" | "));
    });
  } catch (err) {
    abort(err);
  } finally {
    await b.close();
    await second?.close();
    rmSync(dir, { recursive: true, force: true });
  }
  finish();
}

main();
