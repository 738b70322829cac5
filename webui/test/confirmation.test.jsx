import { act, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import Confirmation from "../src/screens/confirmation/Confirmation.jsx";
import { CONFIG, json } from "./fixtures.js";

function renderPage(service = "tts") {
  return render(
    <ConfigContext.Provider value={CONFIG}>
      <Confirmation service={service} />
    </ConfigContext.Provider>,
  );
}

// The sentence that says where the file went, read whole: the address is its own
// left-to-right element inside it.
const sentTo = (text) => screen.getByText((_, el) => el?.tagName === "P" && el.textContent === text);

const lookup = (order) => json(200, { ok: true, email: "a@example.com", name: "", payment_intent: "pi_1", status: "complete", order });

describe("confirmation page", () => {
  beforeEach(() => {
    window.history.replaceState(null, "", "/payment/success");
    vi.useFakeTimers({ shouldAdvanceTime: true });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("keeps the address one left-to-right piece inside the sentence", async () => {
    localStorage.setItem("sessionId", "cs_1");
    const answers = [lookup({ status: "processing", progress: 0 }), json(200, { ok: true, data: { data: "http://x/d/t" }, order: { status: "done", progress: 100 } })];
    vi.stubGlobal("fetch", vi.fn(async () => answers.shift()));
    renderPage();
    await waitFor(() => expect(screen.getByTestId("success")).toBeTruthy());
    const email = screen.getByTestId("email");
    expect(email.tagName).toBe("BDI");
    expect(email.getAttribute("dir")).toBe("ltr");
    expect(email.textContent).toBe("a@example.com");
  });

  it("follows the progress, then shows the link and clears the stored order", async () => {
    localStorage.setItem("sessionId", "cs_1");
    localStorage.setItem("tts", "{}");
    const answers = [
      lookup({ status: "processing", progress: 10 }),
      json(202, { ok: true, order: { status: "processing", progress: 40 } }),
      json(200, { ok: true, data: { data: "http://x/d/tok" }, order: { status: "done", progress: 100 } }),
    ];
    const fetch = vi.fn(async () => answers.shift());
    vi.stubGlobal("fetch", fetch);
    renderPage();
    // Until the session says it was paid, the page does not claim it.
    expect(screen.getByRole("heading").textContent).not.toBe("Payment successful");
    await waitFor(() => expect(screen.getByText("Payment successful")).toBeTruthy());
    expect(screen.getByTestId("progress").textContent).toContain("Processing your request");
    expect(screen.getAllByText("Processing your request", { exact: false })).toHaveLength(1); // one line, not two
    expect(localStorage.getItem("sessionId")).toBeNull(); // read, then removed
    await waitFor(() => expect(screen.getByTestId("progress").textContent).toContain("40% done"));
    expect(screen.getByTestId("progress").getAttribute("aria-live")).toBe("polite");
    await act(async () => vi.advanceTimersByTime(1100));
    await waitFor(() => expect(screen.getByTestId("success")).toBeTruthy());
    expect(screen.getByText("Success")).toBeTruthy();
    expect(sentTo("Your audio file has been sent to a@example.com.")).toBeTruthy();
    expect(screen.getByTestId("download").getAttribute("href")).toBe("http://x/d/tok");
    expect(screen.getByText(/expires in 10 days/)).toBeTruthy();
    expect(localStorage.getItem("tts")).toBeNull();
    expect(fetch.mock.calls[0][0]).toBe("/payment/tts/checkout-session?sessionId=cs_1");
    expect(fetch.mock.calls[1][0]).toBe("/services/tts");
    expect(JSON.parse(fetch.mock.calls[1][1].body)).toEqual({ sessionId: "cs_1" });
  });

  it("shows the place in the queue while the order waits for a worker, on the same line", async () => {
    localStorage.setItem("sessionId", "cs_q");
    localStorage.setItem("tts", "{}");
    const answers = [
      lookup({ status: "paid", progress: 0 }),
      json(202, { ok: true, order: { status: "paid", progress: 0, queuePosition: 3 } }),
      json(202, { ok: true, order: { status: "processing", progress: 20 } }),
    ];
    vi.stubGlobal("fetch", vi.fn(async () => answers.shift()));
    renderPage();
    await waitFor(() => expect(screen.getByTestId("progress-detail").textContent).toBe("In the queue: position 3"));
    await act(async () => vi.advanceTimersByTime(1100));
    await waitFor(() => expect(screen.getByTestId("progress-detail").textContent).toBe("20% done"));
    expect(screen.getAllByText("Processing your request", { exact: false })).toHaveLength(1);
  });

  it("says where the link went when the server has already forgotten the address", async () => {
    localStorage.setItem("sessionId", "cs_3");
    localStorage.setItem("tts", JSON.stringify({ email: "typed@example.com" }));
    const answers = [
      json(200, { ok: true, email: "", name: "", payment_intent: "pi_3", status: "complete", order: { status: "done", progress: 100 } }),
      json(200, { ok: true, data: { data: "http://x/d/t3" }, order: { status: "done", progress: 100 } }),
    ];
    vi.stubGlobal("fetch", vi.fn(async () => answers.shift()));
    renderPage();
    await waitFor(() => expect(screen.getByTestId("success")).toBeTruthy());
    expect(sentTo("Your audio file has been sent to typed@example.com.")).toBeTruthy();
    expect(localStorage.getItem("tts")).toBeNull();
  });

  it.each(["sst", "vtt"])("%s: asks its own service, speaks of the transcription, clears only that order", async (service) => {
    window.history.replaceState(null, "", `/${service}-payment/success`);
    localStorage.setItem("sessionId", "cs_2");
    localStorage.setItem(service, "{}");
    localStorage.setItem("tts", "{}");
    localStorage.setItem("lang", "en");
    const answers = [
      lookup({ status: "processing", progress: 0 }),
      json(202, { ok: true, order: { status: "processing", progress: 55 } }),
      json(200, { ok: true, data: { data: "http://x/d/t2" }, order: { status: "done", progress: 100 } }),
    ];
    const fetch = vi.fn(async () => answers.shift());
    vi.stubGlobal("fetch", fetch);
    renderPage(service);
    await waitFor(() => expect(screen.getByTestId("progress").textContent).toContain("55% done"));
    expect(screen.getByRole("progressbar").getAttribute("value")).toBe("55");
    await act(async () => vi.advanceTimersByTime(1100));
    await waitFor(() => expect(screen.getByTestId("success")).toBeTruthy());
    expect(sentTo("Your transcription file has been sent to a@example.com.")).toBeTruthy();
    expect(screen.getByTestId("download").getAttribute("href")).toBe("http://x/d/t2");
    expect(fetch.mock.calls[0][0]).toBe(`/payment/${service}/checkout-session?sessionId=cs_2`);
    expect(fetch.mock.calls[1][0]).toBe(`/services/${service}`);
    expect(JSON.parse(fetch.mock.calls[1][1].body)).toEqual({ sessionId: "cs_2" });
    expect(localStorage.getItem(service)).toBeNull();
    expect(localStorage.getItem("sessionId")).toBeNull();
    expect(localStorage.getItem("tts")).toBe("{}"); // another service's order stays
    expect(localStorage.getItem("lang")).toBe("en"); // and so does the interface language
  });

  it("says an English translation was sent when that is what the order delivered", async () => {
    window.history.replaceState(null, "", "/vtt-payment/success");
    localStorage.setItem("sessionId", "cs_4");
    const answers = [
      lookup({ status: "processing", progress: 0, translate: true }),
      json(200, { ok: true, data: { data: "http://x/d/t4" }, order: { status: "done", progress: 100, translate: true } }),
    ];
    vi.stubGlobal("fetch", vi.fn(async () => answers.shift()));
    renderPage("vtt");
    await waitFor(() => expect(screen.getByTestId("success")).toBeTruthy());
    expect(sentTo("Your English translation has been sent to a@example.com.")).toBeTruthy();
  });

  it("takes the session id from the session_id query parameter", async () => {
    window.history.replaceState(null, "", "/payment/success?session_id=cs_q");
    const fetch = vi.fn(async () => lookup({ status: "done", progress: 100 }));
    fetch.mockResolvedValueOnce(lookup({ status: "done" })).mockResolvedValueOnce(json(200, { ok: true, data: { data: "L" } }));
    vi.stubGlobal("fetch", fetch);
    renderPage();
    await waitFor(() => expect(screen.getByTestId("success")).toBeTruthy());
    expect(fetch.mock.calls[0][0]).toContain("sessionId=cs_q");
  });

  it("says plainly that a refunded order was refunded", async () => {
    localStorage.setItem("sessionId", "cs_1");
    const answers = [lookup({ status: "failed" }), json(410, { ok: false, error: { code: "order_refunded", message: "x" }, order: { status: "refunded" } })];
    vi.stubGlobal("fetch", vi.fn(async () => answers.shift()));
    renderPage();
    await waitFor(() => expect(screen.getByText("Order refunded")).toBeTruthy());
    expect(screen.getByText(/payment has been refunded in full/)).toBeTruthy();
  });

  it("says how much was refunded, why, and that nothing was kept", async () => {
    localStorage.setItem("sessionId", "cs_2");
    const order = { status: "refunded", error: "source_changed", amount: 149, currency: "eur" };
    const answers = [lookup({ status: "failed" }), json(410, { ok: false, error: { code: "order_refunded", message: "x" }, order })];
    vi.stubGlobal("fetch", vi.fn(async () => answers.shift()));
    renderPage();
    await waitFor(() => expect(screen.getByTestId("refund-reason")).toBeTruthy());
    expect(screen.getByTestId("refund-reason").textContent).toMatch(/has changed since you paid for it/);
    expect(screen.getByTestId("refund-amount").textContent).toBe("Amount refunded: €1.49");
    expect(screen.getByText(/We kept nothing/)).toBeTruthy();
  });

  it("gives the general reason for an unknown one, and no amount for a mismatched payment", async () => {
    localStorage.setItem("sessionId", "cs_3");
    const order = { status: "refunded", error: "amount_mismatch", amount: 99, currency: "eur" };
    const answers = [lookup({ status: "failed" }), json(410, { ok: false, error: { code: "order_refunded", message: "x" }, order })];
    vi.stubGlobal("fetch", vi.fn(async () => answers.shift()));
    renderPage();
    await waitFor(() => expect(screen.getByTestId("refund-reason")).toBeTruthy());
    expect(screen.getByTestId("refund-reason").textContent).toMatch(/did not match the price/);
    expect(screen.queryByTestId("refund-amount")).toBeNull();
  });

  it("alerts 'Something is wrong.' and goes home when the lookup fails", async () => {
    localStorage.setItem("sessionId", "cs_bad");
    const alert = vi.spyOn(window, "alert").mockImplementation(() => {});
    vi.stubGlobal("fetch", vi.fn(async () => json(404, { ok: false, error: { code: "session_not_found", message: "x" } })));
    renderPage();
    await waitFor(() => expect(alert).toHaveBeenCalledWith("Something is wrong."));
    expect(window.location.pathname).toBe("/");
  });

  it("alerts and goes home when there is no session id at all", async () => {
    const alert = vi.spyOn(window, "alert").mockImplementation(() => {});
    vi.stubGlobal("fetch", vi.fn());
    renderPage();
    await waitFor(() => expect(alert).toHaveBeenCalledWith("Something is wrong."));
    expect(window.location.pathname).toBe("/");
  });
});
