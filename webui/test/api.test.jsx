import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import { changeLanguage } from "../src/i18n.js";
import { milliCents, priceRows, samples } from "../src/lib/apiDocs.js";
import { redirectTo } from "../src/lib/redirect.js";
import Api from "../src/screens/api/Api.jsx";
import { closed, CONFIG, json } from "./fixtures.js";

vi.mock("../src/lib/redirect.js", () => ({ redirectTo: vi.fn() }));

const LIMITS = { ok: true, min: 500, max: 10000, currency: "eur", validDays: 365 };
const NOW = 1796600000;
/** GET /v1/credit of a key with a charged 2-character call and a transcription. */
const CREDIT = {
  object: "credit",
  key: "sk-parla-…abcd",
  balance: 499.802,
  currency: "eur",
  expires_at: NOW + 365 * 86400,
  calls: [
    { model: "tts-1", units: 2, unit: "characters", cost: 0.198, status: "settled", created_at: NOW },
    { model: "whisper-1", units: 61500, unit: "milliseconds", cost: 60.885, status: "settled", created_at: NOW },
    { model: "tts-1", units: 1, unit: "characters", cost: 0.099, status: "released", created_at: NOW },
  ],
};

/** The server: /api/credit/config, the checkout's creation and GET /v1/credit. */
function serve() {
  const fetch = vi.fn(async (url) => {
    if (String(url).includes("/api/credit/config")) return json(200, LIMITS);
    if (String(url).includes("create-checkout-session")) return json(200, { ok: true, sessionId: "cs_1", url: "/checkout/test/cs_1" });
    if (String(url).includes("/v1/credit")) return json(200, CREDIT);
    return json(404, { ok: false });
  });
  vi.stubGlobal("fetch", fetch);
  return fetch;
}

function renderPage(config = CONFIG) {
  return render(
    <ConfigContext.Provider value={config}>
      <Api />
    </ConfigContext.Provider>,
  );
}

async function showBalance() {
  await act(async () => fireEvent.change(screen.getByLabelText("API key"), { target: { value: "sk-parla-x" } }));
  await act(async () => fireEvent.click(screen.getByTestId("credit-check")));
  return screen.findByTestId("credit-balance");
}

describe("the /api page", () => {
  afterEach(async () => {
    await act(() => changeLanguage("en"));
    vi.unstubAllGlobals();
    vi.mocked(redirectTo).mockReset();
  });

  it("lists calls with their sizes in words and what each cost to the thousandth of a cent", async () => {
    serve();
    renderPage();
    const balance = await showBalance();
    const rows = within(balance).getAllByTestId("credit-call");
    expect(rows.map((r) => r.children[1].textContent)).toEqual(["2 characters", "61.5 s", "1 character"]);
    expect(rows[0].children[2].textContent).toBe("€0.00198");
    expect(rows[1].children[2].textContent).toBe("€0.60885");
    expect(rows[2].children[2].textContent).toBe("not charged");
    expect(balance.textContent).toContain("€4.99802");
    expect(balance.textContent).not.toContain("{{");
  });

  it("writes the calls' sizes in each language's words, never the placeholder", async () => {
    serve();
    renderPage();
    for (const lng of ["ar", "jp", "ru", "es", "zh"]) {
      await act(() => changeLanguage(lng));
      const balance = screen.queryByTestId("credit-balance") || (await showBalanceIn());
      expect(balance.textContent, lng).not.toContain("{{");
      expect(within(balance).getAllByTestId("credit-call")[0].children[1].textContent, lng).toContain("2");
    }
    async function showBalanceIn() {
      await act(async () => fireEvent.change(document.getElementById("credit-key"), { target: { value: "sk-parla-x" } }));
      await act(async () => fireEvent.click(screen.getByTestId("credit-check")));
      return screen.findByTestId("credit-balance");
    }
  });

  it("sells no transcription when the server's is closed: no price per minute of audio, no sample, no models", async () => {
    serve();
    renderPage(closed("sst"));
    await screen.findByText(/From €5.00 to €100.00/);
    const page = document.body.textContent;
    expect(page).not.toMatch(/minute of audio|Transcription, /);
    expect(page).not.toContain("whisper-1");
    expect(page).not.toContain("transcript.text.delta");
    expect(page).not.toContain("audio_too_long");
    expect(screen.queryByTestId("api-sample-transcription")).toBeNull();
    expect(screen.getByTestId("api-sample-speech")).toBeTruthy();
    expect(page).toContain("Transcription is closed on this server now");
  });

  it("sells transcription when it is open, priced from the server's rule", async () => {
    serve();
    renderPage();
    await screen.findByText(/From €5.00 to €100.00/);
    expect(screen.getByTestId("api-prices").textContent).toBe("Text to speech: €0.99 per 1,000 characters. Transcription: €0.594 per minute of audio.");
    expect(screen.getByTestId("api-sample-transcription").textContent).toContain("/v1/audio/transcriptions");
    expect(document.body.textContent).toContain("transcript.text.delta");
  });

  it("exports the key in every shell sample, and offers JavaScript and Python", async () => {
    serve();
    renderPage();
    expect(screen.getByTestId("api-sample-speech").textContent).toMatch(/^export PARLA_API_KEY=/);
    expect(screen.getByTestId("api-sample-balance").textContent).toMatch(/^export PARLA_API_KEY=[^\n]*\ncurl http:\/\/localhost:\d+\/v1\/credit/);
    await act(async () => fireEvent.click(screen.getByRole("tab", { name: "Python" })));
    expect(screen.getByTestId("api-sample-speech").textContent).toContain("from openai import OpenAI");
    await act(async () => fireEvent.click(screen.getByRole("tab", { name: "JavaScript" })));
    expect(screen.getByTestId("api-sample-transcription").textContent).toContain("client.audio.transcriptions.create");
  });

  it("says why Pay is disabled below the minimum, and that the key is what is sent", async () => {
    serve();
    renderPage();
    await screen.findByText(/From €5.00 to €100.00/);
    expect(screen.queryByTestId("credit-amount-problem")).toBeNull();
    await act(async () => fireEvent.change(screen.getByLabelText("Amount in euros"), { target: { value: "2" } }));
    expect(screen.getByTestId("credit-amount-problem").textContent).toBe("The smallest purchase is €5.00.");
    expect(screen.getByTestId("credit-pay").disabled).toBe(true);
    expect(document.body.textContent).toContain("Your API key is sent to this address.");
    expect(document.body.textContent).not.toContain("download link");
  });

  it("keeps the language and the form through the checkout; a cancelled one says so and keeps what was typed", async () => {
    const fetch = serve();
    window.history.replaceState(null, "", "/ar/api");
    await act(() => changeLanguage("ar"));
    localStorage.removeItem("lang"); // came by the address, never chose a language
    const first = renderPage();
    await waitFor(() => expect(screen.getByTestId("credit-pay")).toBeTruthy());
    await act(async () => fireEvent.change(document.getElementById("credit-amount"), { target: { value: "7.5" } }));
    await act(async () => fireEvent.change(document.getElementById("email"), { target: { value: "dev@example.com" } }));
    await act(async () => fireEvent.change(document.getElementById("email-verify"), { target: { value: "dev@example.com" } }));
    await act(async () => fireEvent.click(screen.getByTestId("credit-pay")));
    await waitFor(() => expect(redirectTo).toHaveBeenCalledWith("/checkout/test/cs_1"));
    expect(JSON.parse(fetch.mock.calls.find(([u]) => String(u).includes("create-checkout-session"))[1].body).order).toMatchObject({ amount: 750, locale: "ar" });
    // The checkout returns to an unprefixed address, which opens in the remembered language.
    expect(localStorage.getItem("lang")).toBe("ar");
    first.unmount();

    renderPage(); // back from a cancelled checkout
    expect(screen.getByTestId("credit-cancelled")).toBeTruthy();
    expect(document.getElementById("credit-amount").value).toBe("7.5");
    expect(document.getElementById("email").value).toBe("dev@example.com");
    expect(document.getElementById("email-verify").value).toBe("dev@example.com");
    window.history.replaceState(null, "", "/");
  });
});

describe("the API's prices and samples", () => {
  it("charges as the server does: proportional, half up to a thousandth of a cent, no minimum", () => {
    const tts = CONFIG.tts.price;
    expect(milliCents(tts, 2)).toBe(198);
    expect(milliCents(tts, 120)).toBe(11880);
    expect(milliCents(tts, 4096)).toBe(405504);
    expect(milliCents(CONFIG.sst.price, 61500, 1000)).toBe(60885);
    expect(milliCents({ unitAmount: 1, per: 3 }, 1)).toBe(333);
    expect(milliCents({ unitAmount: 2, per: 3 }, 1)).toBe(667);
    expect(milliCents(null, 5)).toBe(0);
  });

  it("prices transcription only when it is open", () => {
    expect(priceRows(CONFIG, true).some((r) => r.service === "sst")).toBe(true);
    expect(priceRows(CONFIG, false).every((r) => r.service === "tts")).toBe(true);
    expect(samples("http://x/v1", false).map((s) => s.task)).toEqual(["speech", "balance"]);
  });
});
