import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import { breakable } from "../src/screens/order/FormatStep.jsx";
import Tts from "../src/screens/tts/Tts.jsx";
import { CONFIG, json } from "./fixtures.js";

function renderTts() {
  return render(
    <ConfigContext.Provider value={CONFIG}>
      <Tts />
    </ConfigContext.Provider>,
  );
}
const typeText = (text) => fireEvent.change(screen.getByPlaceholderText("Enter your text here"), { target: { value: text } });

describe("free preview", () => {
  let calls;
  beforeEach(() => {
    calls = [];
    window.history.replaceState(null, "", "/tts");
    URL.createObjectURL = vi.fn(() => "blob:preview-1");
    URL.revokeObjectURL = vi.fn();
    window.HTMLMediaElement.prototype.play = vi.fn(() => Promise.resolve());
  });
  afterEach(() => vi.unstubAllGlobals());

  it("is disabled without text and marked free", () => {
    renderTts();
    const button = screen.getByRole("button", { name: "Preview free" });
    expect(button.disabled).toBe(true);
    expect(screen.getByText(/Free preview: the first ~200 characters/)).toBeTruthy();
  });

  it("sends the voice, speed, format and text, and plays the answer in place", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url, init) => {
        calls.push({ url, body: JSON.parse(init.body) });
        if (url === "/api/tts/preview") return new Response(new Blob(["ID3"], { type: "audio/mpeg" }), { status: 200 });
        return json(200, { ok: true, language: "en", detected: true, characters: 12, amount: 99, currency: "eur" });
      }),
    );
    renderTts();
    fireEvent.click(screen.getByRole("radio", { name: /Nova/ }));
    fireEvent.click(screen.getByRole("radio", { name: /opus/ }));
    typeText("Hello there, world.");
    fireEvent.click(screen.getByRole("button", { name: "Preview free" }));
    const audio = await screen.findByTestId("preview-audio");
    expect(audio.getAttribute("src")).toBe("blob:preview-1");
    await waitFor(() => expect(window.HTMLMediaElement.prototype.play).toHaveBeenCalled());
    const sent = calls.find((c) => c.url === "/api/tts/preview").body;
    expect(sent).toMatchObject({ text: "Hello there, world.", voice: "nova", format: "opus", speed: 1, locale: "en" });
    // A new text makes the preview stale: the player goes until asked again.
    typeText("Something else.");
    expect(screen.queryByTestId("preview-audio")).toBeNull();
  });

  it("says which engines spoke it when the server names them, and nothing when it does not", async () => {
    let engines = "Kokoro, eSpeak NG";
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url) => {
        if (url !== "/api/tts/preview") return json(200, { ok: true, language: "en", detected: true, characters: 12, amount: 99, currency: "eur" });
        const headers = engines ? { "X-Preview-Engines": engines } : {};
        return new Response(new Blob(["ID3"], { type: "audio/mpeg" }), { status: 200, headers });
      }),
    );
    renderTts();
    typeText("Hello there.\nBugün hava çok güzel.");
    fireEvent.click(screen.getByRole("button", { name: "Preview free" }));
    expect((await screen.findByTestId("preview-engines")).textContent).toBe("Spoken by Kokoro and eSpeak NG.");
    engines = "";
    typeText("Hello there.");
    fireEvent.click(screen.getByRole("button", { name: "Preview free" }));
    await screen.findByTestId("preview-audio");
    expect(screen.queryByTestId("preview-engines")).toBeNull();
  });

  it("shows the server's error, e.g. the rate limit, translated", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url) =>
        url === "/api/tts/preview"
          ? json(429, { ok: false, error: { code: "rate_limited", message: "too many" } })
          : json(200, { ok: true, language: "en", detected: true, characters: 5, amount: 99, currency: "eur" }),
      ),
    );
    renderTts();
    typeText("Hello");
    fireEvent.click(screen.getByRole("button", { name: "Preview free" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/Too many/i);
    expect(screen.queryByTestId("preview-audio")).toBeNull();
  });
});

describe("format names", () => {
  it("break only after an underscore", () => {
    const { container } = render(<span>{breakable("verbose_json")}</span>);
    expect(container.innerHTML).toBe("<span>verbose_<wbr>json</span>");
    expect(breakable("mp3")).toEqual(["mp3"]);
  });
});

describe("plural forms of characters", () => {
  it("follow each language's rules", async () => {
    const { default: i18n } = await import("i18next");
    for (const lng of ["ru", "ar"]) {
      const { default: bundle } = await import(`../src/locales/${lng}/translation.json`);
      i18n.addResourceBundle(lng, "translation", bundle, true, true);
    }
    const ru = i18n.getFixedT("ru");
    const tooLong = (t, count) => t("tts.tooLong", { n: String(count), max: "5", count });
    expect(tooLong(ru, 21)).toContain("21 символ при");
    expect(tooLong(ru, 22)).toContain("22 символа при");
    expect(tooLong(ru, 25)).toContain("25 символов при");
    expect(tooLong(ru, 11)).toContain("11 символов при");
    expect(ru("tts.maxChars", { max: "1", count: 1 })).toBe("Не более 1 символа.");
    const ar = i18n.getFixedT("ar");
    expect(tooLong(ar, 2)).toContain("2 حرفان");
    expect(tooLong(ar, 7)).toContain("7 أحرف");
    expect(tooLong(ar, 15)).toContain("15 حرفًا");
    const en = i18n.getFixedT("en");
    expect(en("tts.maxChars", { max: "1", count: 1 })).toBe("Maximum 1 character.");
    expect(en("tts.maxChars", { max: "5,000", count: 5000 })).toBe("Maximum 5,000 characters.");
  });
});

describe("voice samples", () => {
  it("are one labelled play/pause button per voice, no native controls", async () => {
    const play = vi.fn(function () {
      this.dispatchEvent(new Event("play"));
      return Promise.resolve();
    });
    window.HTMLMediaElement.prototype.play = play;
    render(
      <ConfigContext.Provider value={CONFIG}>
        <Tts />
      </ConfigContext.Provider>,
    );
    expect(document.querySelectorAll(".voices audio[controls]")).toHaveLength(0);
    const buttons = screen.getAllByTestId("sample-button");
    expect(buttons).toHaveLength(6);
    const echo = screen.getByRole("button", { name: "Listen to the sample of Echo" });
    fireEvent.click(echo);
    expect(play).toHaveBeenCalledTimes(1);
    expect(play.mock.instances[0].getAttribute("src")).toBe("/api/tts/samples/echo?locale=en");
    expect(screen.getByRole("radio", { name: "Echo" }).checked).toBe(true);
    const pause = await screen.findByRole("button", { name: "Pause the sample of Echo" });
    expect(pause.getAttribute("aria-pressed")).toBe("true");
  });
});
