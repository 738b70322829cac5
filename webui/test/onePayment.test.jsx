import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import { newOrderKey, orderKey, renewOrderKey, storedOrderKey } from "../src/lib/orderKey.js";
import { redirectTo } from "../src/lib/redirect.js";
import Confirmation from "../src/screens/confirmation/Confirmation.jsx";
import Stt from "../src/screens/stt/Stt.jsx";
import Tts from "../src/screens/tts/Tts.jsx";
import { CONFIG, json } from "./fixtures.js";

vi.mock("../src/lib/redirect.js", () => ({ redirectTo: vi.fn() }));

const withConfig = (el) => render(<ConfigContext.Provider value={CONFIG}>{el}</ConfigContext.Provider>);
const typeText = (text) => fireEvent.change(screen.getByPlaceholderText("Enter your text here"), { target: { value: text } });
const typeEmails = (a, b = a) => {
  fireEvent.change(screen.getByLabelText("E-mail"), { target: { value: a } });
  fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: b } });
};
const PAID = { id: "ord1", service: "tts", status: "processing", sessionId: "cs_paid", url: "/payment/success?session_id=cs_paid" };

afterEach(() => {
  vi.unstubAllGlobals();
  vi.mocked(redirectTo).mockReset();
});

describe("order keys", () => {
  it("are random, URL-safe, 24 characters", () => {
    const a = newOrderKey();
    expect(a).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(newOrderKey()).not.toBe(a);
  });
  it("are made once per service, kept, and replaced only for a new order", () => {
    expect(storedOrderKey("tts")).toBe("");
    const k = orderKey("tts");
    expect(orderKey("tts")).toBe(k);
    expect(orderKey("sst")).not.toBe(k);
    const fresh = renewOrderKey("tts");
    expect(fresh).not.toBe(k);
    expect(orderKey("tts")).toBe(fresh);
  });
  it("ignore a stored key of the wrong shape", () => {
    localStorage.setItem("orderKey.tts", "<script>");
    expect(storedOrderKey("tts")).toBe("");
    expect(orderKey("tts")).toMatch(/^[A-Za-z0-9_-]{24}$/);
  });
});

describe("text-to-speech page, one order one payment", () => {
  beforeEach(() => window.history.replaceState(null, "", "/tts"));

  it("keeps the form as it is typed, and a reload restores it", () => {
    withConfig(<Tts />);
    fireEvent.click(screen.getByRole("radio", { name: "Nova" }));
    fireEvent.click(screen.getByRole("radio", { name: /flac/ }));
    fireEvent.change(screen.getByLabelText("Speed"), { target: { value: "1.5" } });
    typeText("Do not lose me");
    typeEmails("keep@example.com");
    cleanup(); // the reload
    withConfig(<Tts />);
    expect(screen.getByPlaceholderText("Enter your text here").value).toBe("Do not lose me");
    expect(screen.getByRole("radio", { name: "Nova" }).checked).toBe(true);
    expect(screen.getByRole("radio", { name: /flac/ }).checked).toBe(true);
    expect(screen.getByTestId("speed-value").textContent).toBe("1.50");
    expect(screen.getByLabelText("E-mail").value).toBe("keep@example.com");
    expect(screen.getByLabelText("Verify e-mail").value).toBe("keep@example.com");
  });

  it("asks the server first: a paid key shows the way to its order instead of Pay", async () => {
    localStorage.setItem("orderKey.tts", "abcdefghijklmnopqrstuvwx");
    localStorage.setItem("tts", JSON.stringify({ ttsText: "Hello", email: "a@example.com" }));
    const fetch = vi.fn(async () => json(200, { ok: true, paid: true, order: PAID }));
    vi.stubGlobal("fetch", fetch);
    withConfig(<Tts />);
    await waitFor(() => expect(screen.getByTestId("already-paid")).toBeTruthy());
    expect(fetch.mock.calls[0][0]).toBe("/payment/tts/order?key=abcdefghijklmnopqrstuvwx");
    expect(screen.getByTestId("open-paid").getAttribute("href")).toBe(PAID.url);
    expect(screen.queryByTestId("pay")).toBeNull();
    // A new order: a new key, the text kept, Pay offered again.
    fireEvent.click(screen.getByTestId("new-order"));
    expect(storedOrderKey("tts")).not.toBe("abcdefghijklmnopqrstuvwx");
    expect(screen.queryByTestId("already-paid")).toBeNull();
    expect(screen.getByPlaceholderText("Enter your text here").value).toBe("Hello");
    expect(screen.getByTestId("pay")).toBeTruthy();
  });

  it("stays on the page with the way to the paid order when the server refuses a second payment", async () => {
    const fetch = vi.fn(async () => json(409, { ok: false, error: { code: "order_already_paid", message: "x" }, order: PAID }));
    vi.stubGlobal("fetch", fetch);
    withConfig(<Tts />);
    typeText("Hello world");
    typeEmails("a@example.com");
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    await waitFor(() => expect(screen.getByTestId("already-paid")).toBeTruthy());
    expect(JSON.parse(fetch.mock.calls[0][1].body).order.key).toBe(storedOrderKey("tts"));
    expect(window.location.pathname).toBe("/tts");
    expect(redirectTo).not.toHaveBeenCalled();
    expect(screen.queryByTestId("pay")).toBeNull();
  });

  it("a tab left open keeps its order's key after another tab delivered and cleared it", async () => {
    localStorage.setItem("orderKey.tts", "stalestalestalestalestal");
    const fetch = vi.fn(async (url) =>
      String(url).startsWith("/payment/tts/order") ? json(200, { ok: true, paid: false }) : json(409, { ok: false, error: { code: "order_already_paid", message: "x" }, order: PAID }),
    );
    vi.stubGlobal("fetch", fetch);
    withConfig(<Tts />);
    typeText("Hello world");
    typeEmails("a@example.com");
    localStorage.removeItem("orderKey.tts"); // the other tab's confirmation page, once delivered
    await act(async () => fireEvent.click(screen.getByTestId("pay")));
    const sent = fetch.mock.calls.find(([u]) => u === "/payment/tts/create-checkout-session");
    expect(JSON.parse(sent[1].body).order.key).toBe("stalestalestalestalestal");
    await waitFor(() => expect(screen.getByTestId("already-paid")).toBeTruthy());
  });

  it("checks the e-mail where it is typed, with the server's message", () => {
    withConfig(<Tts />);
    typeText("Hello world");
    const email = screen.getByLabelText("E-mail");
    fireEvent.change(email, { target: { value: "visitor@example" } });
    expect(screen.queryByTestId("email-invalid")).toBeNull(); // not while typing the first time
    fireEvent.blur(email);
    expect(screen.getByTestId("email-invalid").textContent).toBe("The e-mail address is not valid.");
    expect(email.getAttribute("aria-invalid")).toBe("true");
    fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: "visitor@example" } });
    expect(screen.queryByTestId("pay")).toBeNull(); // never offered to pay with it
    fireEvent.change(email, { target: { value: "visitor@example.com" } });
    fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: "visitor@example.com" } });
    expect(screen.queryByTestId("email-invalid")).toBeNull();
    expect(screen.getByTestId("pay")).toBeTruthy();
  });
});

describe("confirmation page and the order key", () => {
  beforeEach(() => vi.useFakeTimers({ shouldAdvanceTime: true }));
  afterEach(() => vi.useRealTimers());

  it("sends a stale (cancelled) session back to the form and never says the payment succeeded", async () => {
    window.history.replaceState(null, "", "/payment/success");
    localStorage.setItem("sessionId", "cs_cancelled");
    localStorage.setItem("tts", JSON.stringify({ ttsText: "Mine" }));
    const alert = vi.spyOn(window, "alert").mockImplementation(() => {});
    const fetch = vi.fn(async () => json(200, { ok: true, status: "open", payment_status: "unpaid", order: { status: "awaiting_payment" } }));
    vi.stubGlobal("fetch", fetch);
    withConfig(<Confirmation service="tts" />);
    await waitFor(() => expect(window.location.pathname).toBe("/tts"));
    expect(screen.queryByText("Payment successful")).toBeNull();
    expect(fetch).toHaveBeenCalledTimes(1); // no polling, no alert
    expect(alert).not.toHaveBeenCalled();
    expect(JSON.parse(localStorage.getItem("tts")).ttsText).toBe("Mine");
  });

  it("after a refund, 'Place a new order' keeps the values under a new key", async () => {
    window.history.replaceState(null, "", "/payment/success?session_id=cs_1");
    localStorage.setItem("orderKey.tts", "refundedrefundedrefunded");
    localStorage.setItem("tts", JSON.stringify({ ttsText: "Again" }));
    const answers = [
      json(200, { ok: true, status: "complete", payment_status: "paid", order: { status: "failed" } }),
      json(410, { ok: false, error: { code: "order_refunded", message: "x" }, order: { status: "refunded" } }),
    ];
    vi.stubGlobal("fetch", vi.fn(async () => answers.shift()));
    withConfig(<Confirmation service="tts" />);
    await waitFor(() => expect(screen.getByTestId("place-new-order")).toBeTruthy());
    fireEvent.click(screen.getByTestId("place-new-order"));
    expect(window.location.pathname).toBe("/tts");
    expect(storedOrderKey("tts")).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(storedOrderKey("tts")).not.toBe("refundedrefundedrefunded");
    expect(JSON.parse(localStorage.getItem("tts")).ttsText).toBe("Again");
  });
});

describe("audio-to-text page, one order one payment", () => {
  beforeEach(() => window.history.replaceState(null, "", "/sst"));

  it("shows the way to the paid order instead of Pay, and a new order keeps the upload", async () => {
    localStorage.setItem("orderKey.sst", "sstsstsstsstsstsstsstsst");
    localStorage.setItem(
      "sst",
      JSON.stringify({ email: "a@example.com", fileName: "talk.mp3", filePath: "up_abc", outputFormat: "srt", language: "", translate: false, duration: 60, speechSeconds: 50, amount: 99 }),
    );
    const order = { ...PAID, service: "sst", url: "/sst-payment/success?session_id=cs_paid" };
    const fetch = vi.fn(async () => json(200, { ok: true, paid: true, order }));
    vi.stubGlobal("fetch", fetch);
    withConfig(<Stt />);
    await waitFor(() => expect(screen.getByTestId("already-paid")).toBeTruthy());
    expect(fetch.mock.calls[0][0]).toBe("/payment/sst/order?key=sstsstsstsstsstsstsstsst");
    expect(screen.getByTestId("open-paid").getAttribute("href")).toBe(order.url);
    expect(screen.queryByTestId("pay")).toBeNull();
    fireEvent.click(screen.getByTestId("new-order"));
    expect(storedOrderKey("sst")).not.toBe("sstsstsstsstsstsstsstsst");
    expect(screen.getByTestId("pay")).toBeTruthy();
    expect(JSON.parse(localStorage.getItem("sst")).filePath).toBe("up_abc");
  });
});
