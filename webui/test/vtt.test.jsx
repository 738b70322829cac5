import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import { redirectTo } from "../src/lib/redirect.js";
import Vtt from "../src/screens/vtt/Vtt.jsx";
import { CONFIG, closed, json } from "./fixtures.js";

vi.mock("../src/lib/redirect.js", () => ({ redirectTo: vi.fn() }));

const LINK = "https://media.example.com/talk.mp4";
const PROMPT = "Enter a video link and analyze it in the previous steps first.";
const ANALYSIS = { ok: true, durationMinutes: 2, durationSeconds: 1, totalMinutes: 121 / 60, duration: 121, amount: 200, currency: "eur", title: "A talk" };
const nb = (s) => s.replace(/\s/g, " ");
const renderVtt = (config = CONFIG) =>
  render(
    <ConfigContext.Provider value={config}>
      <Vtt />
    </ConfigContext.Provider>,
  );
const typeLink = (v) => fireEvent.change(screen.getByLabelText("Video link"), { target: { value: v } });
const typeEmails = (a, b) => {
  fireEvent.change(screen.getByLabelText("E-mail"), { target: { value: a } });
  fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: b } });
};

/** Types the link and analyses it, the server answering `answer`. */
async function analyze(answer = json(200, ANALYSIS)) {
  const fetch = vi.fn(async () => answer);
  vi.stubGlobal("fetch", fetch);
  typeLink(LINK);
  await act(async () => fireEvent.click(screen.getByTestId("analyze")));
  return fetch;
}

describe("video-to-text page", () => {
  beforeEach(() => window.history.replaceState(null, "", "/vtt"));
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.mocked(redirectTo).mockReset();
  });

  it("shows the intro, the link input, the limit and the per-minute price; no cost before analysis", () => {
    renderVtt();
    expect(screen.getByRole("heading", { level: 1, name: "Video to text" })).toBeTruthy();
    expect(screen.getByTestId("provider").textContent).toBe("Transcription engine: whisper.cpp");
    expect(screen.getByLabelText("Video link").getAttribute("type")).toBe("url");
    expect(nb(screen.getByText(/Maximum length/).textContent)).toBe("Maximum length: 3 hr.");
    expect(screen.getByTestId("price-info").textContent).toBe("Cost: €0.99 per minute, charged by the second, with a minimum of €0.99.");
    expect(screen.queryByTestId("cost")).toBeNull();
    expect(screen.queryByRole("button", { name: "Upload" })).toBeNull(); // no upload step
    expect(screen.getByText(PROMPT)).toBeTruthy();
  });

  it("states an operator's price per started minute", () => {
    const price = { unitAmount: 120, per: 60, rounding: "started", minAmount: 120, perSeconds: 60 };
    renderVtt({ ...CONFIG, vtt: { ...CONFIG.vtt, price } });
    expect(screen.getByTestId("price-info").textContent).toBe("Cost: €1.20 per started minute, with a minimum of €1.20.");
  });

  it("analyzes the link (busy meanwhile), then shows it back with title, duration and cost", async () => {
    renderVtt();
    let answer;
    const fetch = vi.fn(() => new Promise((r) => (answer = r)));
    vi.stubGlobal("fetch", fetch);
    typeLink(`  ${LINK} `);
    await act(async () => fireEvent.click(screen.getByTestId("analyze")));
    expect(screen.getByTestId("analyze").disabled).toBe(true);
    expect(screen.getByTestId("analyze").textContent).toBe("Analyzing…");
    expect(screen.queryByTestId("cost")).toBeNull();
    await act(async () => answer(json(200, ANALYSIS)));
    expect(JSON.parse(fetch.mock.calls[0][1].body)).toEqual({ video: LINK });
    expect(screen.getByTestId("analyze").textContent).toBe("Analyze");
    expect(screen.getByTestId("analysis").textContent).toContain(LINK);
    expect(screen.getByText("Title: A talk")).toBeTruthy();
    expect(nb(screen.getByTestId("duration").textContent)).toBe("Duration: 2 min 1 sec (2:01)");
    expect(screen.getByTestId("cost").textContent).toBe("Cost: €2.00");
  });

  it("shows an analysis refusal in the visitor's language, and an empty link without a call", async () => {
    renderVtt();
    const fetch = await analyze(json(422, { ok: false, error: { code: "video_too_long", message: "x" } }));
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(screen.getByTestId("error").textContent).toBe("This video is longer than the maximum length.");
    expect(screen.queryByTestId("cost")).toBeNull();
    typeLink("   ");
    await act(async () => fireEvent.click(screen.getByTestId("analyze")));
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(screen.getByTestId("error").textContent).toBe("Please enter a video link.");
  });

  it("leaves a link without a scheme to the app's check, not the browser's, and says the server's refusal", async () => {
    renderVtt();
    expect(screen.getByTestId("analyze").closest("form").noValidate).toBe(true);
    const fetch = vi.fn(async () => json(400, { ok: false, error: { code: "unsupported_link", message: "x" } }));
    vi.stubGlobal("fetch", fetch);
    typeLink("example.com/video.mp4");
    await act(async () => fireEvent.click(screen.getByTestId("analyze")));
    expect(JSON.parse(fetch.mock.calls[0][1].body)).toEqual({ video: "example.com/video.mp4" });
    expect(screen.getByTestId("error").textContent).toBe("This link is not supported. Please use an http or https link to a video.");
  });

  it("withdraws the quote when the link is edited", async () => {
    renderVtt();
    await analyze();
    typeEmails("a@example.com", "a@example.com");
    expect(screen.getByTestId("pay")).toBeTruthy();
    typeLink(`${LINK}?v=2`);
    expect(screen.queryByTestId("cost")).toBeNull();
    expect(screen.queryByTestId("pay")).toBeNull();
  });

  it("pays: sends selectedFile and the format, stores the order and the session id, redirects", async () => {
    renderVtt();
    await analyze();
    fireEvent.click(screen.getByRole("radio", { name: /text/ }));
    typeEmails("a@example.com", "a@example.com");
    expect(screen.getByText("Total: €2.00")).toBeTruthy();
    const fetch = vi.fn(async () => json(200, { ok: true, sessionId: "cs_vtt", url: "/checkout/test/cs_vtt", amount: 200, currency: "eur" }));
    vi.stubGlobal("fetch", fetch);
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    expect(fetch.mock.calls[0][0]).toBe("/payment/vtt/create-checkout-session");
    const body = JSON.parse(fetch.mock.calls[0][1].body);
    expect(body.order).toEqual({ selectedFile: LINK, outputFormat: "text", email: "a@example.com", emailVerify: "a@example.com", locale: "en", key: expect.stringMatching(/^[A-Za-z0-9_-]{24}$/) });
    expect(body.order.key).toBe(localStorage.getItem("orderKey.vtt"));
    expect(body.products[0].price_data).toMatchObject({ unit_amount: 200, product_data: { name: "Video to text", description: "Transcription generation" } });
    expect(JSON.parse(localStorage.getItem("vtt"))).toMatchObject({ email: "a@example.com", selectedFile: LINK, outputFormat: "text", language: "" });
    expect(localStorage.getItem("sessionId")).toBe("cs_vtt");
    await waitFor(() => expect(redirectTo).toHaveBeenCalledWith("/checkout/test/cs_vtt"));
  });

  it("forgets the analysis when the server refuses the checkout because the video changed", async () => {
    renderVtt();
    await analyze();
    typeEmails("a@example.com", "a@example.com");
    vi.stubGlobal("fetch", vi.fn(async () => json(409, { ok: false, error: { code: "price_mismatch", message: "x" } })));
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    expect(window.location.search).toBe("?service=vtt&code=price_mismatch");
    expect(JSON.parse(localStorage.getItem("vtt"))).toMatchObject({ selectedFile: LINK, amount: 0, email: "a@example.com" });
  });

  it("restores the order kept in storage", () => {
    localStorage.setItem("vtt", JSON.stringify({ email: "s@example.com", selectedFile: LINK, outputFormat: "json", language: "es", duration: 121, amount: 200, title: "" }));
    renderVtt();
    expect(screen.getByLabelText("Video link").value).toBe(LINK);
    expect(screen.getByTestId("cost").textContent).toBe("Cost: €2.00");
    expect(screen.getByRole("radio", { name: /^json/ }).checked).toBe(true);
    expect(screen.getByLabelText("Spoken language").value).toBe("es");
    expect(screen.getByTestId("pay")).toBeTruthy();
  });

  it("shows the closed notice when the server says the service is not open", () => {
    renderVtt(closed("vtt"));
    expect(screen.getByText("Not offered here at the moment")).toBeTruthy();
    expect(screen.queryByLabelText("Video link")).toBeNull();
  });

  it("shows the video's speech when the server measured it, says so when it could not", async () => {
    renderVtt();
    await analyze(json(200, { ...ANALYSIS, speechSeconds: 95 }));
    expect(nb(screen.getByTestId("speech").textContent)).toBe("About 2 minutes of speech in 2 min 1 sec.");
    await analyze(json(200, ANALYSIS)); // a YouTube link, or a file too big to decode: no speechSeconds
    expect(screen.getByTestId("speech").textContent).toMatch(/^We could not check this video for speech before payment/);
  });

  it("refuses a video without speech before payment, and offers the translation like the audio page", async () => {
    renderVtt();
    await analyze(json(422, { ok: false, error: { code: "no_speech", message: "x" } }));
    expect(screen.getByTestId("error").textContent).toMatch(/^We found no speech in this recording/);
    expect(screen.queryByTestId("cost")).toBeNull();
    fireEvent.click(screen.getByLabelText("Translate into English"));
    expect(JSON.parse(localStorage.getItem("vtt"))).toMatchObject({ translate: true });
  });
});
