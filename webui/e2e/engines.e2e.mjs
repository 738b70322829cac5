// Browser test of issue 31's interface: on a server with two speech engines
// (TTS_ENGINE=openai,espeak, the fake as a Kokoro server), /tts lists the languages under
// the engine that reads them, the quote says which engine reads which of the text's
// languages, in the visitor's language, and the free preview which engines spoke it; the
// page does not shift while it loads and axe-core finds nothing serious, the list open.
//
//   ENGINES_BASE_URL=http://127.0.0.1:4002 node webui/e2e/engines.e2e.mjs
import { abort, assert, check, finish, openBrowser, until } from "./harness.mjs";
import { firstVisit } from "./pagecheck.mjs";

const BASE = (process.env.ENGINES_BASE_URL || "http://127.0.0.1:4002").replace(/\/$/, "");
const ENGLISH = "The weather is lovely today, and we are going for a long walk by the river.";
const TURKISH = "Bugün hava çok güzel, öğleden sonra parkta uzun bir yürüyüş yapacağız.";

async function main() {
  const { context, page, pageErrors, shot, setLang, close } = await openBrowser();
  try {
    await check("320 px: /tts lists the languages under the engine that reads them, without a shift or a serious axe problem", async () => {
      let groups = [];
      const r = await firstVisit(
        context,
        "/tts",
        320,
        async (p) => {
          await p.locator("details.languages summary").click();
          groups = await p.locator("details.languages [data-engine]").evaluateAll((els) =>
            els.map((g) => [g.querySelector("h3").textContent, [...g.querySelectorAll("li")].map((li) => li.textContent)]),
          );
        },
        BASE,
      );
      const by = Object.fromEntries(groups);
      assert(by["Read by Kokoro"]?.includes("Spanish") && !by["Read by Kokoro"].includes("Turkish"), `Kokoro's list: ${by["Read by Kokoro"]}`);
      assert(by["Read by eSpeak NG"]?.includes("Turkish") && !by["Read by eSpeak NG"].includes("English"), `eSpeak NG's list: ${by["Read by eSpeak NG"]}`);
      assert(r.shift <= 0.02, `layout shift ${r.shift.toFixed(4)}: ${r.moved.join("; ")}`);
      assert(r.problems.length === 0, `axe: ${r.problems.join("; ")}`);
      assert(r.errors.length === 0, `page errors: ${r.errors.join("; ")}`);
    });

    await check("the quote names the engine of each language, in the visitor's language; the preview says which spoke it", async () => {
      await page.goto(`${BASE}/tts`, { waitUntil: "networkidle" });
      await setLang("en");
      await page.getByPlaceholder("Enter your text here").fill(`${ENGLISH}\n${TURKISH}`);
      const line = page.getByTestId("language-engines");
      await until(async () => (await line.textContent().catch(() => "")).trim() === "Kokoro reads English. eSpeak NG reads Turkish.", "the quote's engines line");
      await page.getByRole("button", { name: "Preview free" }).click();
      const spoken = page.getByTestId("preview-engines");
      await spoken.waitFor({ timeout: 30000 });
      assert((await spoken.textContent()) === "Spoken by Kokoro and eSpeak NG.", `preview: ${await spoken.textContent()}`);
      await shot("engines-tts-en");
      await setLang("es");
      await until(async () => (await line.textContent().catch(() => "")).trim() === "Kokoro lee inglés. eSpeak NG lee turco.", "the line in Spanish");
    });
    assert(pageErrors.length === 0, `page errors: ${pageErrors.join("; ")}`);
  } finally {
    await close();
  }
  finish();
}

main().catch(abort);
