// The one HTTP client of the app. The Go server serves both the app and the
// API, so every call is same-origin (Vite's dev server proxies them).
// Failures become ApiError with the server's stable code, which the UI
// translates (errors.<code>); the server's English message is never shown.

/** An API failure: `code` is the stable error code, `status` the HTTP status (0: network). */
export class ApiError extends Error {
  constructor(code, status, body) {
    super(code);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.body = body;
  }
}

async function request(method, path, body, { signal } = {}) {
  let res;
  try {
    res = await fetch(path, {
      method,
      signal,
      headers: body === undefined ? { Accept: "application/json" } : { Accept: "application/json", "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    if (err?.name === "AbortError") throw err;
    throw new ApiError("network_error", 0);
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    /* not JSON: handled below */
  }
  if (!res.ok || !data || data.ok === false) {
    throw new ApiError(data?.error?.code || (res.ok ? "bad_response" : `http_${res.status}`), res.status, data);
  }
  return { status: res.status, data };
}

/** GET /api/config: prices, limits, voices, formats, open services, payment mode. */
export async function getConfig(opts) {
  return (await request("GET", "/api/config", undefined, opts)).data;
}

/** The URL of a voice's sample audio. */
export function voiceSampleUrl(voice) {
  return `/api/tts/samples/${encodeURIComponent(voice)}`;
}

/** POST /payment/{service}/create-checkout-session → {ok, sessionId, url, amount, currency}. */
export async function createCheckoutSession(service, payload, opts) {
  return (await request("POST", `/payment/${service}/create-checkout-session`, payload, opts)).data;
}

/** GET /payment/{service}/checkout-session?sessionId= → {email, name, payment_intent, status, order}. */
export async function lookupSession(service, sessionId, opts) {
  const q = new URLSearchParams({ sessionId });
  return (await request("GET", `/payment/${service}/checkout-session?${q}`, undefined, opts)).data;
}

/**
 * POST /services/{service} {sessionId}: `{ready:true, link, order}` when the
 * result exists, `{ready:false, order}` (HTTP 202) while it is being made.
 */
export async function fetchResult(service, sessionId, opts) {
  const { status, data } = await request("POST", `/services/${service}`, { sessionId }, opts);
  if (status === 202) return { ready: false, order: data.order || null };
  return { ready: true, link: data?.data?.data || "", order: data.order || null };
}
