import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import Tts from "../src/screens/tts/Tts.jsx";
import { redirectTo } from "../src/lib/redirect.js";
import { CONFIG, json } from "./fixtures.js";

vi.mock("../src/lib/redirect.js", () => ({ redirectTo: vi.fn() }));

function renderTts(config = CONFIG) {
  return render(
    <ConfigContext.Provider value={config}>
      <Tts />
    </ConfigContext.Provider>,
  );
}

const PROMPT = "Enter text to convert to voice in the previous steps.";
const typeText = (text) => fireEvent.change(screen.getByPlaceholderText("Enter your text here"), { target: { value: text } });
const typeEmails = (a, b) => {
  fireEvent.change(screen.getByLabelText("E-mail"), { target: { value: a } });
  fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: b } });
};

describe("text-to-speech page", () => {
  beforeEach(() => {
    window.history.replaceState(null, "", "/tts");
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.mocked(redirectTo).mockReset();
  });

  it("starts with Alloy, mp3, speed 1.00 and the prompt instead of the pay button", () => {
    renderTts();
    expect(screen.getByRole("radio", { name: "Alloy" }).checked).toBe(true);
    expect(screen.getByRole("radio", { name: /mp3/ }).checked).toBe(true);
    expect(screen.getByTestId("speed-value").textContent).toBe("1.00");
    expect(screen.getByText(PROMPT)).toBeTruthy();
    expect(screen.queryByTestId("pay")).toBeNull();
    expect(screen.queryByTestId("char-count")).toBeNull();
    expect(document.querySelectorAll("audio[preload=none]")).toHaveLength(6);
    expect(document.querySelector("audio").getAttribute("src")).toBe("/api/tts/samples/alloy?locale=en");
  });

  it("shows the live count in code points and the cost", () => {
    renderTts();
    typeText("héllo 😀 你好");
    expect(screen.getByTestId("char-count").textContent).toBe("Characters: 10");
    expect(screen.getByTestId("cost").textContent).toBe("Cost: €0.99");
    typeText("a".repeat(1001));
    expect(screen.getByTestId("char-count").textContent).toBe("Characters: 1,001");
    expect(screen.getByTestId("cost").textContent).toBe("Cost: €1.98");
  });

  it("states the default rule: per started block, no minimum", () => {
    renderTts();
    expect(screen.getByText("Price: €0.99 per started 1,000 characters.")).toBeTruthy();
    expect(screen.queryByText(/Minimum price/)).toBeNull();
  });

  it("shows and charges an operator's proportional price with a minimum, as the server does", async () => {
    const price = { unitAmount: 150, per: 1000, rounding: "proportional", minAmount: 50, unitChars: 1000 };
    renderTts({ ...CONFIG, tts: { ...CONFIG.tts, price } });
    expect(screen.getByText("Price: €1.50 per 1,000 characters, charged by the character.")).toBeTruthy();
    expect(screen.getByText("Minimum price: €0.50.")).toBeTruthy();
    typeText("a".repeat(1500));
    expect(screen.getByTestId("cost").textContent).toBe("Cost: €2.25"); // not €3.00 per started block
    typeText("a".repeat(10));
    expect(screen.getByTestId("cost").textContent).toBe("Cost: €0.50"); // the minimum
  });

  it("moves the speed in hundredths and resets it to 1", () => {
    renderTts();
    const slider = screen.getByLabelText("Speed");
    fireEvent.change(slider, { target: { value: "1.5" } });
    expect(screen.getByTestId("speed-value").textContent).toBe("1.50");
    fireEvent.change(slider, { target: { value: "0.25" } });
    expect(screen.getByTestId("speed-value").textContent).toBe("0.25");
    fireEvent.click(screen.getByRole("button", { name: "Reset" }));
    expect(screen.getByTestId("speed-value").textContent).toBe("1.00");
  });

  it("warns about different e-mails and offers payment only when all conditions hold", () => {
    renderTts();
    typeEmails("a@example.com", "b@example.com");
    expect(screen.getByText("Warning: emails do not match")).toBeTruthy();
    expect(screen.queryByTestId("pay")).toBeNull(); // no text yet, and mismatch
    typeText("Hello");
    expect(screen.queryByTestId("pay")).toBeNull(); // mismatch
    typeEmails("a@example.com", "a@example.com");
    expect(screen.queryByText("Warning: emails do not match")).toBeNull();
    expect(screen.getByTestId("pay").textContent).toBe("Pay €0.99 and generate");
    typeText("");
    expect(screen.queryByTestId("pay")).toBeNull();
    expect(screen.getByText(PROMPT)).toBeTruthy();
  });

  it("gives a text with nothing speakable no price and no pay button, and says why; a word is priced", () => {
    renderTts();
    typeEmails("a@example.com", "a@example.com");
    typeText(" \n\t\u3000 ");
    expect(screen.getByTestId("char-count").textContent).toBe("Characters: 5");
    expect(screen.queryByTestId("cost")).toBeNull();
    expect(screen.queryByTestId("pay")).toBeNull();
    expect(screen.getByText(PROMPT)).toBeTruthy();
    expect(screen.getByTestId("blank-text").textContent).toBe(
      "There is nothing to read in this text: it holds no words or numbers, only spaces, punctuation or symbols. Enter some words to see the price.",
    );
    expect(screen.getByRole("button", { name: "Preview free" }).disabled).toBe(true);
    // Punctuation alone is refused as well (api/orders/testdata/blank_text_cases.json).
    typeText(" ... ");
    expect(screen.queryByTestId("cost")).toBeNull();
    expect(screen.getByTestId("blank-text")).toBeTruthy();
    typeText(" ...a ");
    expect(screen.queryByTestId("blank-text")).toBeNull();
    expect(screen.getByTestId("cost").textContent).toBe("Cost: €0.99");
    expect(screen.getByTestId("pay").textContent).toBe("Pay €0.99 and generate");
  });

  it("refuses a text above the configured maximum with a message", () => {
    renderTts({ ...CONFIG, tts: { ...CONFIG.tts, maxChars: 10 } });
    typeEmails("a@example.com", "a@example.com");
    typeText("x".repeat(11));
    expect(screen.getByRole("alert").textContent).toContain("The text is too long");
    expect(screen.queryByTestId("pay")).toBeNull();
  });

  it("pays: saves the choices, creates the session with the shown amount, stores the id and redirects", async () => {
    const fetch = vi.fn(async () => json(200, { ok: true, sessionId: "cs_test_1", url: "/checkout/test/cs_test_1", amount: 99, currency: "eur" }));
    vi.stubGlobal("fetch", fetch);
    renderTts();
    fireEvent.click(screen.getByRole("radio", { name: "Nova" }));
    fireEvent.click(screen.getByRole("radio", { name: /flac/ }));
    fireEvent.change(screen.getByLabelText("Speed"), { target: { value: "1.25" } });
    typeText("Hello world");
    typeEmails("a@example.com", "a@example.com");
    await act(async () => fireEvent.click(screen.getByTestId("pay")));

    expect(fetch).toHaveBeenCalledTimes(1);
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe("/payment/tts/create-checkout-session");
    expect(init.method).toBe("POST");
    const body = JSON.parse(init.body);
    expect(body.order).toEqual({
      voice: "nova",
      input: "Hello world",
      format: "flac",
      speed: 1.25,
      email: "a@example.com",
      emailVerify: "a@example.com",
      locale: "en",
      key: localStorage.getItem("orderKey.tts"),
    });
    expect(body.order.key).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(body.products).toHaveLength(1);
    expect(body.products[0].quantity).toBe(1);
    expect(body.products[0].price_data.currency).toBe("eur");
    expect(body.products[0].price_data.unit_amount).toBe(99);
    expect(JSON.parse(localStorage.getItem("tts"))).toEqual({
      activeVoice: "nova",
      ttsText: "Hello world",
      speed: 1.25,
      email: "a@example.com",
      outputFormat: "flac",
    });
    expect(localStorage.getItem("sessionId")).toBe("cs_test_1");
    await waitFor(() => expect(redirectTo).toHaveBeenCalledWith("/checkout/test/cs_test_1"));
  });

  it("sends the visitor to /payment/error with the code when checkout creation is refused", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => json(409, { ok: false, error: { code: "price_mismatch", message: "x" } })));
    renderTts();
    typeText("Hello");
    typeEmails("a@example.com", "a@example.com");
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    expect(window.location.pathname).toBe("/payment/error");
    expect(new URLSearchParams(window.location.search).get("code")).toBe("price_mismatch");
    expect(redirectTo).not.toHaveBeenCalled();
    expect(localStorage.getItem("sessionId")).toBeNull();
  });

  it("sends the visitor to /payment/error when the call throws", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => Promise.reject(new TypeError("Failed to fetch"))));
    renderTts();
    typeText("Hello");
    typeEmails("a@example.com", "a@example.com");
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    expect(window.location.pathname).toBe("/payment/error");
  });

  it("restores the choices saved before the checkout", () => {
    localStorage.setItem("tts", JSON.stringify({ activeVoice: "echo", ttsText: "Saved", speed: 2, email: "s@example.com", outputFormat: "aac" }));
    renderTts();
    expect(screen.getByRole("radio", { name: "Echo" }).checked).toBe(true);
    expect(screen.getByPlaceholderText("Enter your text here").value).toBe("Saved");
    expect(screen.getByTestId("speed-value").textContent).toBe("2.00");
    expect(screen.getByTestId("pay")).toBeTruthy();
  });

  it("lets the visitor's text run in its own direction", () => {
    renderTts();
    expect(document.getElementById("tts-text").getAttribute("dir")).toBe("auto");
  });

  it("shows the closed notice when the server says the service is not open", () => {
    renderTts({ ...CONFIG, services: { ...CONFIG.services, tts: { open: false, reason: "engine_unavailable" } } });
    expect(screen.getByText("Not offered here at the moment")).toBeTruthy();
    expect(screen.queryByPlaceholderText("Enter your text here")).toBeNull();
  });
});
