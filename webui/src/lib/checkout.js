import { createCheckoutSession } from "../api.js";
import { navigate } from "../router.jsx";
import { alreadyPaidOrder, orderKey } from "./orderKey.js";
import { redirectTo } from "./redirect.js";
import { SESSION_KEY, write } from "./storage.js";

/**
 * Pays for an order of `service` (spec: "States and transitions"): creates the checkout
 * session, stores its id under 'sessionId' and leaves for the hosted
 * checkout — the built-in test checkout's `url`, or Stripe.js by session id
 * when `payment.mode` is "stripe". A refused or failed creation goes to
 * /payment/error with the error code. Resolves false only when the visitor
 * is still on the page (a failed Stripe redirect, silently ignored per the
 * spec's "The error catalogue"), so the page can offer the button again. `onRefused(code)` runs
 * before leaving for the error page, so a page can forget what the server
 * no longer accepts (an expired upload, a changed price).
 * The order carries `key`, the page's order key (lib/orderKey.js; the stored
 * one when none is given); when the
 * server says that order is paid already (order_already_paid) the visitor
 * stays on the page and `onAlreadyPaid(order)` shows the way to it.
 * @param {string} service tts, sst or vtt
 * @param {{order: object, products: object[]}} payload
 * @param {{mode?: string, publishableKey?: string}} [payment] the config's payment
 * @param {{onRefused?: (code: string) => void, onAlreadyPaid?: (order: import("../api.js").Order) => void, key?: string}} [opts]
 * @returns {Promise<boolean>}
 */
export async function checkout(service, payload, payment, { onRefused, onAlreadyPaid, key } = {}) {
  let res;
  try {
    const body = { ...payload, order: { ...payload.order, key: key || orderKey(service) } };
    res = await createCheckoutSession(service, body);
    if (!res?.ok || !res.sessionId) throw Object.assign(new Error("bad_response"), { code: "bad_response" });
  } catch (err) {
    const paid = alreadyPaidOrder(err);
    if (paid && onAlreadyPaid) {
      onAlreadyPaid(paid);
      return false;
    }
    const code = err?.code || "network_error";
    onRefused?.(code);
    navigate(`/payment/error?service=${service}&code=${encodeURIComponent(code)}`);
    return true;
  }
  write(SESSION_KEY, res.sessionId);
  if (payment?.mode !== "stripe") {
    redirectTo(res.url);
    return true;
  }
  try {
    // Stripe.js is fetched only now, when the visitor actually pays.
    const { loadStripe } = await import("@stripe/stripe-js/pure");
    const stripe = await loadStripe(payment.publishableKey);
    if (typeof stripe?.redirectToCheckout === "function") {
      await stripe.redirectToCheckout({ sessionId: res.sessionId });
    } else if (res.url) {
      redirectTo(res.url);
      return true;
    }
  } catch {
    /* a failed redirect is silently ignored (spec: "The error catalogue") */
  }
  return false;
}

/**
 * The checkout line item the page shows (spec: "Entities and their fields");
 * the server refuses it if its own price differs.
 */
export function lineItem({ currency, amount, name, description }) {
  return { price_data: { currency, unit_amount: amount, product_data: { name, description, images: [] } }, quantity: 1 };
}
