// One order, one payment. Each service's open order has an order key, kept in
// local storage (so every tab of the site shares it) beside the order itself
// ('tts', 'sst', 'vtt'). A page takes the stored key when it opens (making one
// if there is none), keeps it while it is open, and sends it with every checkout
// of that order; the key is replaced only when the visitor starts a new order.
// A tab left open on a paid order keeps that order's key, so its Pay is refused
// even once the delivered order was cleared from storage. The server takes one payment per key and refuses a second checkout
// with order_already_paid (api/README.md).
import { orderByKey } from "../api.js";
import { read, remove, write } from "./storage.js";

/** The storage key of a service's order key. */
export const orderKeyName = (service) => `orderKey.${service}`;

const SHAPE = /^[A-Za-z0-9_-]{16,64}$/;

/** A new random order key: 24 URL-safe characters (144 bits). */
export function newOrderKey() {
  const bytes = new Uint8Array(18);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The service's stored order key, or "" when there is none (or it was tampered with). */
export function storedOrderKey(service) {
  const k = read(orderKeyName(service)) || "";
  return SHAPE.test(k) ? k : "";
}

/** The service's order key, made and stored now if there is none. */
export function orderKey(service) {
  let k = storedOrderKey(service);
  if (!k) {
    k = newOrderKey();
    write(orderKeyName(service), k);
  }
  return k;
}

/** Starts a new order: the next checkout of the service is a new payment (the form keeps its values). */
export function renewOrderKey(service) {
  const k = newOrderKey();
  write(orderKeyName(service), k);
  return k;
}

/** Forgets the service's order key (its order is delivered). */
export function forgetOrderKey(service) {
  remove(orderKeyName(service));
}

/**
 * The paid order of the service's stored key — {id, status, sessionId, url} — or null
 * when there is no key or its order is not paid. A failed question answers null: the
 * server still refuses a second payment when the visitor clicks Pay.
 */
export async function paidOrder(service, key, opts) {
  if (!SHAPE.test(key || "")) return null;
  try {
    const r = await orderByKey(service, key, opts);
    return r?.paid && r.order ? r.order : null;
  } catch (err) {
    if (err?.name === "AbortError") throw err;
    return null;
  }
}

/** The order named by an order_already_paid refusal (ApiError), or null for any other failure. */
export function alreadyPaidOrder(err) {
  return err?.code === "order_already_paid" && err.body?.order ? err.body.order : null;
}

/** Whether a value is an order key of the right shape. */
export const isOrderKey = (k) => typeof k === "string" && SHAPE.test(k);
