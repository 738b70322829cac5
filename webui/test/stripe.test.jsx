import { act, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import { redirectTo } from "../src/lib/redirect.js";
import Tts from "../src/screens/tts/Tts.jsx";
import { CONFIG, json } from "./fixtures.js";

const redirectToCheckout = vi.fn();
const loadStripe = vi.fn(async () => ({ redirectToCheckout }));
vi.mock("@stripe/stripe-js/pure", () => ({ loadStripe: (...a) => loadStripe(...a) }));
vi.mock("../src/lib/redirect.js", () => ({ redirectTo: vi.fn() }));

const STRIPE = { ...CONFIG, payment: { mode: "stripe", publishableKey: "pk_test_123" } };

async function payOnce() {
  vi.stubGlobal("fetch", vi.fn(async () => json(200, { ok: true, sessionId: "cs_live_1", url: "https://checkout.stripe.com/c/pay/cs_live_1" })));
  render(
    <ConfigContext.Provider value={STRIPE}>
      <Tts />
    </ConfigContext.Provider>,
  );
  fireEvent.change(screen.getByPlaceholderText("Enter your text here"), { target: { value: "Hello" } });
  fireEvent.change(screen.getByLabelText("E-mail"), { target: { value: "a@example.com" } });
  fireEvent.change(screen.getByLabelText("Verify e-mail"), { target: { value: "a@example.com" } });
  await act(async () => fireEvent.click(screen.getByTestId("pay")));
}

describe("paying in stripe mode", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.clearAllMocks();
  });

  it("loads Stripe.js with the configured key and redirects by session id", async () => {
    window.history.replaceState(null, "", "/tts");
    redirectToCheckout.mockResolvedValue({});
    await payOnce();
    expect(loadStripe).toHaveBeenCalledWith("pk_test_123");
    expect(redirectToCheckout).toHaveBeenCalledWith({ sessionId: "cs_live_1" });
    expect(redirectTo).not.toHaveBeenCalled();
    expect(localStorage.getItem("sessionId")).toBe("cs_live_1");
  });

  it("ignores a failed redirect silently: no error page, the button works again", async () => {
    window.history.replaceState(null, "", "/tts");
    redirectToCheckout.mockRejectedValue(new Error("blocked"));
    await payOnce();
    expect(window.location.pathname).toBe("/tts");
    expect(screen.getByTestId("pay").disabled).toBe(false);
  });
});
