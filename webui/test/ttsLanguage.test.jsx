import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import i18n, { changeLanguage } from "../src/i18n.js";
import { languageOptions } from "../src/lib/inputLanguages.js";
import Tts from "../src/screens/tts/Tts.jsx";
import { redirectTo } from "../src/lib/redirect.js";
import { CONFIG, json } from "./fixtures.js";

vi.mock("../src/lib/redirect.js", () => ({ redirectTo: vi.fn() }));

// The engine's languages, as /api/config lists espeak-ng's (a few of them).
const LANGS = ["ar", "en", "es", "fr", "ja", "piqd", "ru", "zh"];
const WITH_LANGS = { ...CONFIG, tts: { ...CONFIG.tts, languages: LANGS } };

const SPANISH = "Esta mañana hacía frío, así que nos quedamos en casa leyendo libros.";
const typeText = (text) => fireEvent.change(screen.getByPlaceholderText("Enter your text here"), { target: { value: text } });

/** A fetch that answers quotes with `quote(body)` and checkouts with a session. */
function server(quote) {
  return vi.fn(async (url, init) => {
    const body = JSON.parse(init.body);
    if (url === "/api/tts/quote") return quote(body);
    return json(200, { ok: true, sessionId: "cs_test_1", url: "/checkout/test/cs_test_1", amount: 99, currency: "eur", language: body.order.language || "es" });
  });
}
const detected = (language, extra = {}) => json(200, { ok: true, language, detected: true, mixed: false, characters: 10, amount: 99, currency: "eur", ...extra });

function renderTts(config = WITH_LANGS) {
  return render(
    <ConfigContext.Provider value={config}>
      <Tts />
    </ConfigContext.Provider>,
  );
}

describe("language of the text", () => {
  beforeEach(() => window.history.replaceState(null, "", "/tts"));
  afterEach(async () => {
    vi.unstubAllGlobals();
    vi.mocked(redirectTo).mockReset();
    await act(() => i18n.changeLanguage("en"));
  });

  it("offers detection and the engine's languages, named in the visitor's language", () => {
    renderTts();
    const select = screen.getByLabelText("Language of the text");
    const options = [...select.options].map((o) => [o.value, o.textContent]);
    expect(options[0]).toEqual(["", "Detect automatically"]);
    const offered = LANGS.filter((l) => l !== "piqd"); // Klingon: not in a paid product's list
    expect(options.map((o) => o[0]).slice(1).sort()).toEqual(offered);
    expect(options).toContainEqual(["es", "Spanish"]);
    expect(select.value).toBe("");
    // The collapsible list is the engine's too.
    expect(screen.getByText(`Supported languages (${offered.length})`)).toBeTruthy();
  });

  it("shows the detected language before paying, asked once the visitor stops typing", async () => {
    const fetch = server(() => detected("es"));
    vi.stubGlobal("fetch", fetch);
    renderTts();
    typeText("Esta");
    typeText(SPANISH);
    await waitFor(() => expect(screen.getByTestId("detected-language").textContent).toBe("Detected language: Spanish"));
    const quotes = fetch.mock.calls.filter(([url]) => url === "/api/tts/quote");
    expect(quotes).toHaveLength(1); // debounced: not one per keystroke
    expect(JSON.parse(quotes[0][1].body)).toEqual({ text: SPANISH, language: "", locale: "en" });
  });

  it("lets the visitor choose another language, and orders in it", async () => {
    const fetch = server((body) => json(200, { ok: true, language: body.language || "es", detected: !body.language, mixed: false }));
    vi.stubGlobal("fetch", fetch);
    renderTts();
    typeText(SPANISH);
    await waitFor(() => expect(screen.getByTestId("detected-language").textContent).toBe("Detected language: Spanish"));
    fireEvent.change(screen.getByLabelText("Language of the text"), { target: { value: "fr" } });
    await waitFor(() => expect(screen.getByTestId("detected-language").textContent).toBe("The text will be read in French."));
    fireEvent.change(screen.getByLabelText("E-mail"), { target: { value: "a@example.com" } });
    fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: "a@example.com" } });
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    const [, init] = fetch.mock.calls.find(([url]) => url === "/payment/tts/create-checkout-session");
    expect(JSON.parse(init.body).order.language).toBe("fr");
  });

  it("says when paragraphs are read in their own languages", async () => {
    vi.stubGlobal("fetch", server(() => detected("en", { mixed: true })));
    renderTts();
    typeText("Hello there, this is English.\nHola, esto es español.");
    await waitFor(() => expect(screen.getByTestId("detected-language").textContent).toBe("Detected: mostly English; each paragraph is read in its own language."));
  });

  it("names the language in the interface language and asks with the visitor's locale", async () => {
    await act(() => i18n.changeLanguage("jp"));
    const fetch = server(() => detected("es"));
    vi.stubGlobal("fetch", fetch);
    renderTts();
    typeText(SPANISH);
    const want = languageOptions("ja", ["es"])[0].name;
    await waitFor(() => expect(screen.getByTestId("detected-language").textContent).toContain(want));
    expect(want).not.toBe("Spanish");
    expect(JSON.parse(fetch.mock.calls[0][1].body).locale).toBe("jp");
  });

  it("refuses a text no voice reads: the reason, and no pay button", async () => {
    vi.stubGlobal("fetch", server(() => json(400, { ok: false, error: { code: "language_unsupported", message: "x" } })));
    renderTts();
    typeText("བོད་ཀྱི་སྐད་ཡིག");
    fireEvent.change(screen.getByLabelText("E-mail"), { target: { value: "a@example.com" } });
    fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: "a@example.com" } });
    await waitFor(() => expect(screen.getByTestId("language-error").textContent).toContain("None of our voices speaks"));
    expect(screen.queryByTestId("pay")).toBeNull();
  });

  it("asks nothing of an engine that names no languages", async () => {
    const fetch = vi.fn();
    vi.stubGlobal("fetch", fetch);
    renderTts(CONFIG);
    typeText(SPANISH);
    await new Promise((r) => setTimeout(r, 600));
    expect(fetch).not.toHaveBeenCalled();
    expect(screen.queryByLabelText("Language of the text")).toBeNull();
  });
});

// TTS_ENGINE=openai,espeak: the server says which engine reads which language.
const READERS = [
  { engine: "eSpeak NG", languages: ["ar", "ru", "tr"] },
  { engine: "Kokoro", languages: ["en", "es", "fr", "ja", "zh"] },
];
const TWO_ENGINES = { ...CONFIG, tts: { ...CONFIG.tts, languages: [...LANGS, "tr"], engines: READERS } };
const TURKISH = "Bugün hava çok güzel, öğleden sonra parkta uzun bir yürüyüş yapacağız.";

describe("which engine reads which language", () => {
  beforeEach(() => window.history.replaceState(null, "", "/tts"));
  afterEach(async () => {
    vi.unstubAllGlobals();
    await act(() => changeLanguage("en"));
  });

  it("lists the languages under the engine that reads them", () => {
    renderTts(TWO_ENGINES);
    const groups = [...document.querySelectorAll(".languages [data-engine]")].map((g) => [
      g.querySelector("h3").textContent,
      [...g.querySelectorAll("li")].map((li) => li.textContent),
    ]);
    expect(groups).toEqual([
      ["Read by eSpeak NG", ["Arabic", "Russian", "Turkish"]],
      ["Read by Kokoro", ["Chinese", "English", "French", "Japanese", "Spanish"]],
    ]);
  });

  it("says in the quote which engine reads which of the text's languages, in the visitor's language", async () => {
    const engines = [{ engine: "Kokoro", languages: ["es", "en"] }, { engine: "eSpeak NG", languages: ["tr"] }];
    vi.stubGlobal("fetch", server(() => detected("es", { mixed: true, engines })));
    renderTts(TWO_ENGINES);
    typeText(`${SPANISH}\n${TURKISH}`);
    await waitFor(() => expect(screen.getByTestId("language-engines").textContent).toBe(" Kokoro reads Spanish and English. eSpeak NG reads Turkish."));
    await act(() => changeLanguage("es"));
    await waitFor(() => expect(screen.getByTestId("language-engines").textContent).toBe(" Kokoro lee español e inglés. eSpeak NG lee turco."));
  });

  it("says nothing of engines with one engine", async () => {
    vi.stubGlobal("fetch", server(() => detected("es")));
    renderTts();
    typeText(SPANISH);
    await waitFor(() => expect(screen.getByTestId("detected-language").textContent).toBe("Detected language: Spanish"));
    expect(screen.queryByTestId("language-engines")).toBeNull();
    expect(document.querySelector(".languages h3")).toBeNull();
  });
});
