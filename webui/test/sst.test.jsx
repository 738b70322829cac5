import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import { changeLanguage } from "../src/i18n.js";
import { readMediaDuration } from "../src/lib/mediaDuration.js";
import { redirectTo } from "../src/lib/redirect.js";
import Stt from "../src/screens/stt/Stt.jsx";
import { CONFIG, closed, FakeXHR, json } from "./fixtures.js";

vi.mock("../src/lib/redirect.js", () => ({ redirectTo: vi.fn() }));
vi.mock("../src/lib/mediaDuration.js", () => ({ readMediaDuration: vi.fn(async () => 65) }));

const PROMPT = "Upload an audio file in the previous steps first.";
const nb = (s) => s.replace(/\s/g, " ");
const renderSst = (config = CONFIG) =>
  render(
    <ConfigContext.Provider value={config}>
      <Stt />
    </ConfigContext.Provider>,
  );
const mp3 = (name = "talk.mp3", size = 1000) => new File([new Uint8Array(size)], name, { type: "audio/mpeg" });
const choose = async (file) => {
  await act(async () => fireEvent.change(screen.getByLabelText("Audio file"), { target: { files: [file] } }));
};
const typeEmails = (a, b) => {
  fireEvent.change(screen.getByLabelText("E-mail"), { target: { value: a } });
  fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: b } });
};
const UPLOADED = { ok: true, file: { filename: "talk.mp3", path: "up_abc" }, duration: 201, speechSeconds: 130, amount: 199, currency: "eur" };

/** Chooses a file, uploads it and lets the fake server answer `answer`. */
async function uploadWith(answer = UPLOADED, status = 200) {
  await choose(mp3());
  fireEvent.click(screen.getByTestId("upload"));
  await act(async () => FakeXHR.last.respond(status, answer));
}

describe("audio-to-text page", () => {
  beforeEach(() => {
    window.history.replaceState(null, "", "/sst");
    vi.stubGlobal("XMLHttpRequest", FakeXHR);
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.mocked(redirectTo).mockReset();
    vi.restoreAllMocks();
  });

  it("shows the intro, the engine, the limits, the languages and the price from config", () => {
    renderSst();
    expect(screen.getByRole("heading", { level: 1, name: "Audio to text" })).toBeTruthy();
    expect(screen.getByTestId("provider").textContent).toBe("Transcription engine: whisper.cpp");
    const input = screen.getByLabelText("Audio file");
    expect(input.getAttribute("type")).toBe("file");
    expect(input.getAttribute("accept")).toBe("audio/*,.mp3,.mp4,.mpeg,.mpga,.m4a,.wav,.webm");
    expect(nb(screen.getByText(/Maximum size/).textContent)).toBe("Maximum size: 25 MB.");
    expect(nb(screen.getByText(/Maximum length/).textContent)).toBe("Maximum length: 3 hr.");
    expect(screen.getByLabelText("Audio file").getAttribute("aria-describedby")).toBe("audio-limits");
    expect(screen.getByText(/Maximum length/).closest("#audio-limits")).toBeTruthy();
    expect(screen.getByText("Accepted formats: mp3, mp4, mpeg, mpga, m4a, wav, webm.")).toBeTruthy();
    expect(screen.getByText("Supported languages (57)")).toBeTruthy();
    expect(screen.getByTestId("price-info").textContent).toBe(
      "Cost: €0.99 per 100 seconds (about €0.59 per minute), charged by the second, with a minimum of €0.99.",
    );
    expect(screen.getByRole("option", { name: "Detect automatically" }).selected).toBe(true);
    expect(screen.getByRole("option", { name: "French" })).toBeTruthy();
    expect(screen.getByText(PROMPT)).toBeTruthy();
    expect(screen.queryByTestId("pay")).toBeNull();
  });

  it("writes the file chooser's button and 'no file chosen' in the interface language, over the hidden input", async () => {
    renderSst();
    const button = screen.getByTestId("file-button");
    expect(button.textContent).toBe("Choose a file");
    expect(button.tagName).toBe("LABEL");
    expect(button.getAttribute("for")).toBe(screen.getByLabelText("Audio file").id);
    expect(screen.getByTestId("file-name").textContent).toBe("No file chosen");
    await choose(mp3());
    expect(screen.getByTestId("file-name").textContent).toBe("talk.mp3");
    cleanup();
    try {
      await act(() => changeLanguage("es"));
      renderSst();
      expect(screen.getByTestId("file-button").textContent).toBe("Elegir archivo");
      expect(screen.getByTestId("file-name").textContent).toBe("Ningún archivo seleccionado");
    } finally {
      await act(() => changeLanguage("en"));
    }
  });

  it("names OpenAI when the server uses it", () => {
    renderSst({ ...CONFIG, sst: { ...CONFIG.sst, engine: "openai" } });
    expect(screen.getByTestId("provider").textContent).toBe("Transcription engine: OpenAI");
  });

  it("shows the chosen file's duration in minutes and seconds and an estimate", async () => {
    renderSst();
    await choose(mp3("talk.mp3"));
    expect(screen.getByText("Chosen file: talk.mp3")).toBeTruthy();
    expect(nb(screen.getByTestId("browser-duration").textContent)).toBe(
      "Duration as your browser reads it: about 1 min 5 sec (1:05). The server measures it during the upload, and charges that.",
    );
    expect(screen.getByTestId("browser-duration").querySelector("time").getAttribute("datetime")).toBe("PT1M5S");
    expect(screen.getByText("Estimated cost: €0.99")).toBeTruthy();
    expect(screen.queryByTestId("pay")).toBeNull(); // an estimate is not a quote
  });

  it("states and estimates an operator's price per started minute", async () => {
    const price = { unitAmount: 50, per: 60, rounding: "started", minAmount: 0, perSeconds: 60 };
    renderSst({ ...CONFIG, sst: { ...CONFIG.sst, price } });
    expect(screen.getByTestId("price-info").textContent).toBe("Cost: €0.50 per started minute, with a minimum of €0.00.");
    await choose(mp3("talk.mp3")); // 65 s: two started minutes
    expect(screen.getByText("Estimated cost: €1.00")).toBeTruthy();
  });

  it("states a price per started block of seconds with what one minute costs", () => {
    const price = { unitAmount: 40, per: 45, rounding: "started", minAmount: 99, perSeconds: 45 };
    renderSst({ ...CONFIG, sst: { ...CONFIG.sst, price } });
    expect(screen.getByTestId("price-info").textContent).toBe(
      "Cost: €0.40 per started 45 seconds (one minute costs €0.80), with a minimum of €0.99.",
    );
  });

  it("says when the browser cannot read the duration, and warns about an oversized file", async () => {
    vi.mocked(readMediaDuration).mockResolvedValueOnce(null);
    renderSst({ ...CONFIG, sst: { ...CONFIG.sst, maxUploadBytes: 500 } });
    await choose(mp3("big.wav", 1000));
    expect(screen.getByText(/cannot read the duration/)).toBeTruthy();
    expect(screen.getByRole("alert").textContent).toContain("larger than");
  });

  it("without a file, Upload only notes 'Please select a file' in the console", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    FakeXHR.last = null;
    renderSst();
    fireEvent.click(screen.getByTestId("upload"));
    expect(log).toHaveBeenCalledWith("Please select a file");
    expect(FakeXHR.last).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("uploads with a live percentage, then keeps the server's file, duration and price and clears the chooser", async () => {
    renderSst();
    await choose(mp3());
    fireEvent.click(screen.getByTestId("upload"));
    expect(screen.getByTestId("upload").disabled).toBe(true);
    await act(async () => FakeXHR.last.progress(420, 1000));
    expect(screen.getByTestId("upload-progress").textContent).toBe("Uploading… 42%");
    expect(screen.getByRole("progressbar").getAttribute("value")).toBe("42");
    await act(async () => FakeXHR.last.progress(1000, 1000));
    expect(screen.getByTestId("upload-progress").textContent).toContain("checking the file");
    await act(async () => FakeXHR.last.respond(200, UPLOADED));
    expect(screen.getByText("Uploaded: talk.mp3")).toBeTruthy();
    expect(nb(screen.getByTestId("server-duration").textContent)).toBe("Duration: 3 min 21 sec (3:21)");
    expect(nb(screen.getByTestId("speech").textContent)).toBe("About 2 minutes of speech in 3 min 21 sec.");
    expect(screen.getByTestId("cost").textContent).toBe("Cost: €1.99"); // the server's amount, not the estimate
    expect(screen.queryByText("Chosen file: talk.mp3")).toBeNull();
    expect(screen.getByLabelText("Audio file").value).toBe("");
    expect(screen.getByTestId("upload").disabled).toBe(false);
    expect(JSON.parse(localStorage.getItem("sst"))).toMatchObject({ fileName: "talk.mp3", filePath: "up_abc", amount: 199 });
  });

  it("shows an upload refusal in the visitor's language", async () => {
    renderSst();
    await uploadWith({ ok: false, error: { code: "not_audio", message: "x" } }, 422);
    expect(screen.getByTestId("error").textContent).toBe("This file contains no audio. Please choose an audio file.");
    expect(screen.queryByTestId("cost")).toBeNull();
  });

  it("reads a dropped connection on an oversized file as 'too large'", async () => {
    renderSst({ ...CONFIG, sst: { ...CONFIG.sst, maxUploadBytes: 10 } });
    await choose(mp3("big.mp3", 100));
    fireEvent.click(screen.getByTestId("upload"));
    await act(async () => FakeXHR.last.fail());
    expect(screen.getByTestId("error").getAttribute("data-code")).toBe("file_too_large");
  });

  it("preselects no format, shows the choice, and offers payment only with a quote and matching e-mails", async () => {
    renderSst();
    const radios = screen.getAllByRole("radio");
    expect(radios.map((r) => r.value)).toEqual(["json", "text", "srt", "verbose_json", "vtt"]);
    expect(radios.some((r) => r.checked)).toBe(false);
    expect(screen.getByTestId("format-current").textContent).toContain("No format selected yet");
    fireEvent.click(screen.getByRole("radio", { name: /srt/ }));
    expect(screen.getByTestId("format-current").textContent).toBe("Selected format: srt");
    typeEmails("a@example.com", "a@example.com");
    expect(screen.queryByTestId("pay")).toBeNull(); // nothing uploaded
    await uploadWith();
    expect(screen.getByTestId("pay").textContent).toBe("Pay and Transcribe");
    expect(screen.getByText("Total: €1.99")).toBeTruthy();
    typeEmails("a@example.com", "b@example.com");
    expect(screen.getByText("Warning: emails do not match")).toBeTruthy();
    expect(screen.queryByTestId("pay")).toBeNull();
    expect(screen.getByText(PROMPT)).toBeTruthy();
  });

  it("pays: saves the order, sends it with the language, stores the session id and redirects", async () => {
    renderSst();
    await uploadWith();
    fireEvent.click(screen.getByRole("radio", { name: /srt/ }));
    fireEvent.change(screen.getByLabelText("Spoken language"), { target: { value: "fr" } });
    typeEmails("a@example.com", "a@example.com");
    const fetch = vi.fn(async () => json(200, { ok: true, sessionId: "cs_sst", url: "/checkout/test/cs_sst", amount: 199, currency: "eur" }));
    vi.stubGlobal("fetch", fetch);
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe("/payment/sst/create-checkout-session");
    const body = JSON.parse(init.body);
    expect(body.order).toEqual({
      filePath: "up_abc",
      fileName: "talk.mp3",
      response_format: "srt",
      email: "a@example.com",
      emailVerify: "a@example.com",
      locale: "en",
      language: "fr",
      key: localStorage.getItem("orderKey.sst"),
    });
    expect(body.order.key).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(body.products[0].price_data).toMatchObject({ currency: "eur", unit_amount: 199 });
    expect(body.products[0].price_data.product_data).toMatchObject({ name: "Speech-to-text", description: "Transcription generation" });
    expect(JSON.parse(localStorage.getItem("sst"))).toEqual({
      email: "a@example.com", fileName: "talk.mp3", filePath: "up_abc", outputFormat: "srt", language: "fr", translate: false, duration: 201, speechSeconds: 130, amount: 199,
    });
    expect(localStorage.getItem("sessionId")).toBe("cs_sst");
    await waitFor(() => expect(redirectTo).toHaveBeenCalledWith("/checkout/test/cs_sst"));
  });

  it("leaves out the language when it is detected automatically; a refusal goes to /payment/error", async () => {
    renderSst();
    await uploadWith();
    typeEmails("a@example.com", "a@example.com");
    const fetch = vi.fn(async () => json(404, { ok: false, error: { code: "upload_not_found", message: "x" } }));
    vi.stubGlobal("fetch", fetch);
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    expect(JSON.parse(fetch.mock.calls[0][1].body).order).not.toHaveProperty("language");
    expect(window.location.pathname).toBe("/payment/error");
    expect(window.location.search).toBe("?service=sst&code=upload_not_found");
    // The swept upload is forgotten, so the page asks for a new one; the rest of the order stays.
    expect(JSON.parse(localStorage.getItem("sst"))).toMatchObject({ filePath: "", amount: 0, email: "a@example.com" });
  });

  it("restores the order kept in storage", () => {
    localStorage.setItem(
      "sst",
      JSON.stringify({ email: "s@example.com", fileName: "memo.m4a", filePath: "up_9", outputFormat: "vtt", language: "de", duration: 30, amount: 99 }),
    );
    renderSst();
    expect(screen.getByText("Uploaded: memo.m4a")).toBeTruthy();
    expect(screen.getByRole("radio", { name: /vtt/ }).checked).toBe(true);
    expect(screen.getByLabelText("Spoken language").value).toBe("de");
    expect(screen.getByTestId("pay")).toBeTruthy();
  });

  it("shows the closed notice when the server says the service is not open", () => {
    renderSst(closed("sst"));
    expect(screen.getByText("Not offered here at the moment")).toBeTruthy();
    expect(screen.queryByLabelText("Audio file")).toBeNull();
    expect(screen.queryByTestId("pay")).toBeNull();
  });

  it("refuses a file without speech before payment, in the visitor's language", async () => {
    renderSst();
    await uploadWith({ ok: false, error: { code: "no_speech", message: "x" } }, 422);
    expect(screen.getByTestId("error").textContent).toBe("We found no speech in this recording, so there is nothing to transcribe. Check that you chose the right file.");
    expect(screen.queryByTestId("cost")).toBeNull();
    expect(screen.queryByTestId("pay")).toBeNull();
  });

  it("orders an English translation when ticked, and remembers the choice", async () => {
    renderSst();
    const box = screen.getByLabelText("Translate into English");
    expect(box.checked).toBe(false);
    expect(screen.getByText(/instead of a transcript in the spoken language/)).toBeTruthy();
    await uploadWith();
    fireEvent.click(box);
    typeEmails("a@example.com", "a@example.com");
    expect(JSON.parse(localStorage.getItem("sst"))).toMatchObject({ translate: true });
    const fetch = vi.fn(async () => json(200, { ok: true, sessionId: "cs_sst", url: "/checkout/test/cs_sst", amount: 199, currency: "eur" }));
    vi.stubGlobal("fetch", fetch);
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    expect(JSON.parse(fetch.mock.calls[0][1].body).order).toMatchObject({ filePath: "up_abc", translate: true });
    cleanup();
    renderSst(); // back on the page: the box is still ticked, the speech measure still shown
    expect(screen.getByLabelText("Translate into English").checked).toBe(true);
    expect(nb(screen.getByTestId("speech").textContent)).toBe("About 2 minutes of speech in 3 min 21 sec.");
  });

  it("offers no translation when the engine cannot translate, and sends no stored wish for one", async () => {
    localStorage.setItem("sst", JSON.stringify({ translate: true }));
    renderSst({ ...CONFIG, sst: { ...CONFIG.sst, translate: false } });
    expect(screen.queryByLabelText("Translate into English")).toBeNull();
    await uploadWith();
    typeEmails("a@example.com", "a@example.com");
    const fetch = vi.fn(async () => json(200, { ok: true, sessionId: "cs_sst", url: "/checkout/test/cs_sst", amount: 199, currency: "eur" }));
    vi.stubGlobal("fetch", fetch);
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    expect(JSON.parse(fetch.mock.calls[0][1].body).order.translate).toBeUndefined();
  });
});
