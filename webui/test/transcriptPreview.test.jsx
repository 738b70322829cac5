import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import { changeLanguage } from "../src/i18n.js";
import { redirectTo } from "../src/lib/redirect.js";
import Stt from "../src/screens/stt/Stt.jsx";
import Vtt from "../src/screens/vtt/Vtt.jsx";
import { CONFIG, FakeXHR, json } from "./fixtures.js";

vi.mock("../src/lib/redirect.js", () => ({ redirectTo: vi.fn() }));
vi.mock("../src/lib/mediaDuration.js", () => ({ readMediaDuration: vi.fn(async () => 180) }));

// Issue 46, "read before you pay": the first 30 s of the recording, transcribed, under the price.
const PREVIEW_CONFIG = { ...CONFIG, preview: { seconds: 30, enabled: true } };
const UPLOADED = { ok: true, file: { filename: "talk.mp3", path: "up_abc" }, duration: 180, speechSeconds: 150, amount: 179, currency: "eur" };
const LINK = "https://media.example.com/talk.mp4";
const ANALYSIS = { ok: true, durationMinutes: 3, durationSeconds: 0, totalMinutes: 3, duration: 180, amount: 297, currency: "eur" };
const TEXT = "Hello from the test clip. It was made for the Parla browser test.";
const ready = (data) => json(200, { ok: true, data: { text: TEXT, language: "en", seconds: 30, speech: true, ...data } });
const pending = () => new Response(JSON.stringify({ ok: true, pending: true }), { status: 202, headers: { "Content-Type": "application/json", "Retry-After": "1" } });
const refusal = (status, code, headers = {}) =>
  new Response(JSON.stringify({ ok: false, error: { code, message: "x" } }), { status, headers: { "Content-Type": "application/json", ...headers } });

const renderPage = (Page, config = PREVIEW_CONFIG) =>
  render(
    <ConfigContext.Provider value={config}>
      <Page />
    </ConfigContext.Provider>,
  );

/**
 * A fetch that answers the preview with `answer(body, n)` (n: which preview request, from 0)
 * and the checkout with a session; `previews` are the bodies the page posted to the preview.
 */
function stubFetch(answer) {
  const previews = [];
  const fetch = vi.fn(async (url, init) => {
    const body = init?.body ? JSON.parse(init.body) : null;
    if (url.endsWith("/preview")) {
      previews.push({ url, body });
      return answer(body, previews.length - 1);
    }
    if (url === "/services/vtt/analyzevideo") return json(200, ANALYSIS);
    if (url.endsWith("/create-checkout-session")) return json(200, { ok: true, sessionId: "cs_1", url: "/checkout/test/cs_1", amount: 179, currency: "eur" });
    throw new Error(`unexpected fetch ${url}`);
  });
  vi.stubGlobal("fetch", fetch);
  return { fetch, previews };
}

async function upload() {
  await act(async () => fireEvent.change(screen.getByLabelText("Audio file"), { target: { files: [new File([new Uint8Array(10)], "talk.mp3", { type: "audio/mpeg" })] } }));
  fireEvent.click(screen.getByTestId("upload"));
  await act(async () => FakeXHR.last.respond(200, UPLOADED));
}

const typeEmails = (a) => {
  fireEvent.change(screen.getByLabelText("E-mail"), { target: { value: a } });
  fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: a } });
};

describe("transcription preview on /sst", () => {
  beforeEach(() => {
    window.history.replaceState(null, "", "/sst");
    vi.stubGlobal("XMLHttpRequest", FakeXHR);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    vi.mocked(redirectTo).mockReset();
  });

  it("takes its room under the price once the upload is priced, polls while 202, then shows the first lines and the language heard", async () => {
    const { previews } = stubFetch((body, n) => (n === 0 ? pending() : ready()));
    renderPage(Stt);
    expect(screen.queryByTestId("transcript-preview")).toBeNull(); // nothing priced yet
    await upload();
    const block = screen.getByTestId("transcript-preview");
    // Under the price rule, above the spoken language, in step 1.
    expect(block.closest("li").getAttribute("aria-labelledby")).toBe("file-title");
    expect(screen.getByTestId("price-info").compareDocumentPosition(block) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(block.compareDocumentPosition(screen.getByLabelText("Spoken language")) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(screen.getByTestId("preview-pending").textContent).toBe("Listening to the first 30 seconds…");
    await waitFor(() => expect(previews).toHaveLength(1));
    expect(previews[0]).toEqual({ url: "/services/sst/preview", body: { filePath: "up_abc", language: "", locale: "en" } });
    await waitFor(() => expect(screen.getByTestId("preview-text").textContent).toBe(TEXT), { timeout: 3000 });
    expect(previews).toHaveLength(2); // asked again after the 202's Retry-After, the same body
    expect(previews[1].body).toEqual(previews[0].body);
    expect(screen.getByTestId("preview-text").getAttribute("dir")).toBe("auto");
    expect(screen.getByTestId("preview-text").getAttribute("lang")).toBe("en");
    expect(screen.getByTestId("preview-heard").textContent).toBe("Heard: English.");
    expect(screen.queryByTestId("preview-pending")).toBeNull();
    expect(screen.getByTestId("preview-wrong").textContent).toBe("Not what you expected?");
  });

  it("'Not what you expected?' sets the order's spoken language, makes the preview again in it, and the checkout carries it", async () => {
    const { fetch, previews } = stubFetch((body) => (body.language === "fr" ? ready({ text: "Bonjour à tous.", language: "fr" }) : ready()));
    renderPage(Stt);
    await upload();
    await screen.findByTestId("preview-text");
    fireEvent.click(screen.getByTestId("preview-wrong"));
    const pick = screen.getByLabelText("Language spoken in the recording:");
    fireEvent.change(pick, { target: { value: "fr" } });
    expect(screen.getByLabelText("Spoken language").value).toBe("fr"); // the page's own select
    await waitFor(() => expect(screen.getByTestId("preview-text").textContent).toBe("Bonjour à tous."));
    expect(previews.at(-1).body).toEqual({ filePath: "up_abc", language: "fr", locale: "en" });
    expect(screen.getByTestId("preview-heard").textContent).toBe("Transcribed as French, as you chose.");
    fireEvent.click(screen.getByRole("radio", { name: /srt/ }));
    typeEmails("a@example.com");
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    const checkout = fetch.mock.calls.find(([url]) => url === "/payment/sst/create-checkout-session");
    expect(JSON.parse(checkout[1].body).order).toMatchObject({ filePath: "up_abc", language: "fr" });
  });

  it("changing the spoken-language select makes the preview again for that language", async () => {
    const { previews } = stubFetch((body) => ready({ language: body.language || "en" }));
    renderPage(Stt);
    await upload();
    await screen.findByTestId("preview-text");
    fireEvent.change(screen.getByLabelText("Spoken language"), { target: { value: "de" } });
    await waitFor(() => expect(previews.at(-1).body.language).toBe("de"));
    await waitFor(() => expect(screen.getByTestId("preview-heard").textContent).toBe("Transcribed as German, as you chose."));
  });

  it("a late answer for the previous language does not overwrite the new one", async () => {
    let lateAnswer;
    const { previews } = stubFetch((body) => {
      if (body.language === "") return new Promise((resolve) => (lateAnswer = resolve)); // held back
      return ready({ text: "Guten Tag.", language: "de" });
    });
    renderPage(Stt);
    await upload();
    await waitFor(() => expect(previews).toHaveLength(1));
    fireEvent.change(screen.getByLabelText("Spoken language"), { target: { value: "de" } });
    await waitFor(() => expect(screen.getByTestId("preview-text").textContent).toBe("Guten Tag."));
    await act(async () => lateAnswer(ready({ text: "Old text for detection.", language: "en" })));
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.getByTestId("preview-text").textContent).toBe("Guten Tag.");
    expect(screen.getByTestId("preview-heard").textContent).toBe("Transcribed as German, as you chose.");
    expect(previews).toHaveLength(2); // the held-back request was not polled again
  });

  it("a late answer for the previous file is not shown for the new one", async () => {
    let lateAnswer;
    const { previews } = stubFetch((body) => (body.filePath === "up_abc" ? new Promise((resolve) => (lateAnswer = resolve)) : ready({ text: "The second file." })));
    renderPage(Stt);
    await upload();
    await waitFor(() => expect(previews).toHaveLength(1));
    await act(async () => fireEvent.change(screen.getByLabelText("Audio file"), { target: { files: [new File([new Uint8Array(10)], "two.mp3", { type: "audio/mpeg" })] } }));
    expect(screen.queryByTestId("transcript-preview")).toBeNull(); // a new file withdraws the quote, and its preview
    fireEvent.click(screen.getByTestId("upload"));
    await act(async () => FakeXHR.last.respond(200, { ...UPLOADED, file: { filename: "two.mp3", path: "up_two" } }));
    await act(async () => lateAnswer(ready({ text: "The first file." })));
    await waitFor(() => expect(screen.getByTestId("preview-text").textContent).toBe("The second file."));
    expect(previews.map((p) => p.body.filePath)).toEqual(["up_abc", "up_two"]);
  });

  it("without speech in the first seconds says so, and payment stays open", async () => {
    stubFetch(() => ready({ text: "", speech: false }));
    renderPage(Stt);
    await upload();
    await waitFor(() =>
      expect(screen.getByTestId("preview-note").textContent).toBe("No speech in the first 30 seconds — the rest of the recording may still have some."),
    );
    expect(screen.queryByTestId("preview-text")).toBeNull();
    fireEvent.click(screen.getByRole("radio", { name: /srt/ }));
    typeEmails("a@example.com");
    expect(screen.getByTestId("pay")).toBeTruthy();
  });

  it("429 preview_budget_spent says so with the minutes of Retry-After", async () => {
    stubFetch(() => refusal(429, "preview_budget_spent", { "Retry-After": "540" }));
    renderPage(Stt);
    await upload();
    await waitFor(() =>
      expect(screen.getByTestId("preview-note").textContent).toBe(
        "You have used this hour's free previews; you can still order. Previews are free again in 9 minutes.",
      ),
    );
  });

  it("503 preview_unavailable hides the block quietly", async () => {
    const { previews } = stubFetch(() => refusal(503, "preview_unavailable"));
    renderPage(Stt);
    await upload();
    await waitFor(() => expect(previews).toHaveLength(1));
    await waitFor(() => expect(screen.queryByTestId("transcript-preview")).toBeNull());
    expect(screen.queryByRole("alert")).toBeNull();
    fireEvent.change(screen.getByLabelText("Spoken language"), { target: { value: "de" } });
    await new Promise((r) => setTimeout(r, 50));
    expect(previews).toHaveLength(1); // not asked again on this page
  });

  it("another failure is a short note that the order is not affected", async () => {
    stubFetch(() => refusal(502, "preview_failed"));
    renderPage(Stt);
    await upload();
    await waitFor(() => expect(screen.getByTestId("preview-note").textContent).toBe("The preview could not be made; your order is not affected."));
    expect(screen.getByTestId("preview-note").getAttribute("data-code")).toBe("preview_failed");
  });

  it("is not asked for when the server's previews are off", async () => {
    const { previews } = stubFetch(() => ready());
    renderPage(Stt, { ...CONFIG, preview: { seconds: 30, enabled: false } });
    await upload();
    await new Promise((r) => setTimeout(r, 50));
    expect(previews).toHaveLength(0);
    expect(screen.queryByTestId("transcript-preview")).toBeNull();
  });

  it("stops asking after about 90 s of 202s, and when the page goes", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const { previews } = stubFetch(() => pending());
    const { unmount } = renderPage(Stt);
    await upload();
    await act(() => vi.advanceTimersByTimeAsync(100_000));
    const asked = previews.length;
    expect(asked).toBeGreaterThanOrEqual(60);
    expect(asked).toBeLessThanOrEqual(95);
    expect(screen.getByTestId("preview-note").getAttribute("data-code")).toBe("preview_timeout");
    expect(screen.getByTestId("preview-note").textContent).toBe("The preview could not be made; your order is not affected.");
    await act(() => vi.advanceTimersByTimeAsync(10_000));
    expect(previews).toHaveLength(asked);

    fireEvent.change(screen.getByLabelText("Spoken language"), { target: { value: "de" } }); // asks anew
    await act(() => vi.advanceTimersByTimeAsync(3_000));
    const before = previews.length;
    expect(before).toBeGreaterThan(asked);
    unmount();
    await act(() => vi.advanceTimersByTimeAsync(10_000));
    expect(previews).toHaveLength(before);
  });

  it("reads right to left in Arabic, the text's own direction left to the browser", async () => {
    stubFetch((body, n) => (n === 0 ? pending() : ready({ text: "مرحبا بكم", language: "ar" })));
    try {
      await act(() => changeLanguage("ar"));
      renderPage(Stt);
      await act(async () => fireEvent.change(screen.getByLabelText("الملف الصوتي"), { target: { files: [new File([new Uint8Array(10)], "talk.mp3")] } }));
      fireEvent.click(screen.getByTestId("upload"));
      await act(async () => FakeXHR.last.respond(200, UPLOADED));
      expect(screen.getByTestId("preview-pending").textContent).toBe("نستمع إلى أول 30 ثانية…");
      await waitFor(() => expect(screen.getByTestId("preview-text").textContent).toBe("مرحبا بكم"), { timeout: 3000 });
      expect(screen.getByTestId("preview-heard").textContent).toMatch(/^اللغة المسموعة: .+\.$/);
      expect(screen.getByTestId("preview-wrong").textContent).toBe("ليس ما توقعته؟");
    } finally {
      await act(() => changeLanguage("en"));
    }
  });
});

describe("transcription preview on /vtt", () => {
  beforeEach(() => window.history.replaceState(null, "", "/vtt"));
  afterEach(() => vi.unstubAllGlobals());

  it("after the analysis, shows the link's first lines under the price", async () => {
    const { previews } = stubFetch(() => ready());
    renderPage(Vtt);
    fireEvent.change(screen.getByLabelText("Video link"), { target: { value: LINK } });
    await act(async () => fireEvent.click(screen.getByTestId("analyze")));
    await waitFor(() => expect(screen.getByTestId("preview-text").textContent).toBe(TEXT));
    expect(previews[0]).toEqual({ url: "/services/vtt/preview", body: { video: LINK, language: "", locale: "en" } });
    expect(screen.getByTestId("transcript-preview").closest("li").getAttribute("aria-labelledby")).toBe("link-title");
    // Editing the link withdraws the analysis and its preview.
    fireEvent.change(screen.getByLabelText("Video link"), { target: { value: `${LINK}?t=2` } });
    expect(screen.queryByTestId("transcript-preview")).toBeNull();
  });
});
