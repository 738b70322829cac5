// The one HTTP client of the app. The Go server serves both the app and the
// API, so every call is same-origin (Vite's dev server proxies them).
// Failures become ApiError with the server's stable code, which the UI
// translates (errors.<code>); the server's English message is never shown.
// The answers' types below follow api/README.md; tsc checks them (npm run check:types).

/**
 * @typedef {object} CallOptions
 * @property {AbortSignal} [signal] aborts the call; it then rejects with the AbortError
 */

/**
 * The site's configuration (prices, limits, voices, formats, open services, payment mode);
 * its shape is the server's and is read where it is used.
 * @typedef {Record<string, any>} Config
 */

/**
 * An order as the server tells it (api/README.md, session lookup): its fields beyond these
 * depend on the answer.
 * @typedef {object} Order
 * @property {string} id
 * @property {string} [service] tts, sst or vtt
 * @property {string} status awaiting_payment, paid, processing, done, failed, refunded or expired
 * @property {number} [progress] percent done while processing
 * @property {string} [link] the result's link once done
 * @property {string} [expiresAt] RFC 3339, once done
 * @property {string} [error] why it failed or was refunded
 * @property {number} [amount] in cents of `currency`
 * @property {string} [currency]
 * @property {string} [sessionId] the checkout's (order_already_paid, order by key)
 * @property {string} [url] the order's page (order_already_paid, order by key)
 */

/**
 * @typedef {object} TtsQuote
 * @property {string} language the code the text will be spoken in
 * @property {boolean} detected false when the language was chosen
 * @property {boolean} mixed true when paragraphs are in different languages
 * @property {number} characters
 * @property {number} amount in cents of `currency`
 * @property {string} currency
 * @property {{engine: string, languages: string[]}[]} [engines] which engine reads which of
 *   the text's languages (several engines only)
 */

/**
 * @typedef {object} CheckoutSession
 * @property {boolean} ok
 * @property {string} sessionId
 * @property {string} url the hosted checkout (the test checkout's, or Stripe's)
 * @property {number} amount in cents of `currency`
 * @property {string} currency
 */

/**
 * @typedef {object} SessionLookup
 * @property {string} email
 * @property {string} name
 * @property {string} payment_intent
 * @property {string} status
 * @property {string} [payment_status]
 * @property {Order} order
 */

/**
 * @typedef {object} Result
 * @property {boolean} ready whether the result exists
 * @property {string} [link] the result's link, when ready
 * @property {Order | null} order
 */

/**
 * @typedef {object} UploadAnswer
 * @property {{filename: string, path: string}} file the name given and the opaque upload id
 * @property {number} duration whole seconds, as the server measured them
 * @property {number} [speechSeconds] seconds of speech, present when measured
 * @property {number} amount in cents of `currency`
 * @property {string} currency
 */

/**
 * @typedef {object} UploadOptions
 * @property {(percent: number) => void} [onProgress] whole percents as the bytes leave
 * @property {AbortSignal} [signal] aborts the upload; it then rejects with the AbortError
 */

/**
 * @typedef {object} VideoAnalysis
 * @property {number} [duration] whole seconds
 * @property {number} durationMinutes
 * @property {number} durationSeconds
 * @property {number} totalMinutes
 * @property {number} [speechSeconds] seconds of speech, present when measured
 * @property {number} amount in cents of `currency`
 * @property {string} currency
 * @property {string} [title]
 */

/**
 * @typedef {object} OrderByKey
 * @property {boolean} paid whether the key's order is paid
 * @property {Order} [order] the paid order ({id, service, status, sessionId, url})
 */

/**
 * A parsed answer: the HTTP status, the JSON body, whose shape each call names, and the
 * ETag, when the answer has one.
 * @typedef {{status: number, data: any, etag: string}} Answer
 */

/**
 * An API failure: `code` is the stable error code, `status` the HTTP status (0: network),
 * `retryAfter` the seconds of its Retry-After header, where a call reads it (0: none).
 */
export class ApiError extends Error {
  /**
   * @param {string} code
   * @param {number} status
   * @param {any} [body] the parsed answer, when there was one
   */
  constructor(code, status, body) {
    super(code);
    this.name = "ApiError";
    this.code = code;
    this.status = status;
    this.body = body;
    this.retryAfter = 0;
  }
}

/**
 * Whether a failed call was aborted: that rejection is passed on as it is.
 * @param {unknown} err
 */
const aborted = (err) => /** @type {{name?: unknown} | null | undefined} */ (err)?.name === "AbortError";

/**
 * A same-origin JSON call: `body`, when given, is sent as JSON; `ifMatch`, when given, is
 * sent as If-Match (the version a change starts from).
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {CallOptions & {ifMatch?: string}} [opts]
 * @returns {Promise<Answer>}
 */
async function request(method, path, body, { signal, ifMatch } = {}) {
  /** @type {Record<string, string>} */
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (ifMatch) headers["If-Match"] = ifMatch;
  let res;
  try {
    res = await fetch(path, { method, signal, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    if (aborted(err)) throw err;
    throw new ApiError("network_error", 0);
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    /* not JSON: handled by answer() */
  }
  return answer(res.status, data, res.headers?.get("ETag") || "");
}

/**
 * The parsed answer of a call, or the ApiError it stands for.
 * @param {number} status
 * @param {any} data the parsed body, null when it was not JSON
 * @param {string} [etag]
 * @returns {Answer}
 */
function answer(status, data, etag = "") {
  const ok = status >= 200 && status < 300;
  if (!ok || !data || data.ok === false) {
    throw new ApiError(data?.error?.code || (ok ? "bad_response" : `http_${status}`), status, data);
  }
  return { status, data, etag };
}

/**
 * Upload progress in whole percent, never above 100.
 * @param {number} loaded
 * @param {number} total
 * @returns {number}
 */
export function uploadPercent(loaded, total) {
  if (!(total > 0)) return 0;
  return Math.min(100, Math.floor((loaded / total) * 100));
}

/**
 * GET /api/config: prices, limits, voices, formats, open services, payment mode.
 * @param {CallOptions} [opts]
 * @returns {Promise<Config>}
 */
export async function getConfig(opts) {
  return (await request("GET", "/api/config", undefined, opts)).data;
}

/**
 * The URL of a voice's sample audio, spoken in the interface language `locale` (en, jp, …).
 * @param {string} voice
 * @param {string} [locale]
 * @returns {string}
 */
export function voiceSampleUrl(voice, locale = "en") {
  return `/api/tts/samples/${encodeURIComponent(voice)}?locale=${encodeURIComponent(locale)}`;
}

/**
 * POST /api/tts/quote {text, language, locale} → {language, detected, mixed, characters,
 * amount, currency}: the language the text will be spoken in (chosen or detected).
 * @param {{text: string, language?: string, locale?: string}} payload
 * @param {CallOptions} [opts]
 * @returns {Promise<TtsQuote>}
 */
export async function quoteTts(payload, opts) {
  return (await request("POST", "/api/tts/quote", payload, opts)).data;
}

// The pages name an order's parts plainly (upload, link, format); the routes keep the names
// clients and stored orders know: an audio order's upload is filePath and its format
// response_format, a video order's link selectedFile and its format outputFormat. They are
// translated here, once.
/** @type {Record<string, Record<string, string>>} */
const WIRE_NAMES = {
  sst: { upload: "filePath", format: "response_format" },
  vtt: { link: "selectedFile", format: "outputFormat" },
};

/**
 * An order as the service's route names its fields.
 * @param {string} service
 * @param {Record<string, any>} order
 */
function toWire(service, order) {
  const names = WIRE_NAMES[service];
  if (!names || !order) return order;
  return Object.fromEntries(Object.entries(order).map(([k, v]) => [names[k] || k, v]));
}

/**
 * POST /payment/{service}/create-checkout-session → {ok, sessionId, url, amount, currency}.
 * @param {string} service tts, sst or vtt
 * @param {{order: object, products: object[]}} payload the order with the pages' names (upload, link, format)
 * @param {CallOptions} [opts]
 * @returns {Promise<CheckoutSession>}
 */
export async function createCheckoutSession(service, payload, opts) {
  const body = { ...payload, order: toWire(service, payload.order) };
  return (await request("POST", `/payment/${service}/create-checkout-session`, body, opts)).data;
}

/**
 * GET /payment/{service}/checkout-session?sessionId= → {email, name, payment_intent, status, order}.
 * @param {string} service
 * @param {string} sessionId
 * @param {CallOptions} [opts]
 * @returns {Promise<SessionLookup>}
 */
export async function lookupSession(service, sessionId, opts) {
  const q = new URLSearchParams({ sessionId });
  return (await request("GET", `/payment/${service}/checkout-session?${q}`, undefined, opts)).data;
}

/**
 * POST /services/{service} {sessionId}: `{ready:true, link, order}` when the
 * result exists, `{ready:false, order}` (HTTP 202) while it is being made.
 * @param {string} service
 * @param {string} sessionId
 * @param {CallOptions} [opts]
 * @returns {Promise<Result>}
 */
export async function fetchResult(service, sessionId, opts) {
  const { status, data } = await request("POST", `/services/${service}`, { sessionId }, opts);
  if (status === 202) return { ready: false, order: data.order || null };
  return { ready: true, link: data?.data?.data || "", order: data.order || null };
}

/**
 * POST /services/sst/uploadaudio (multipart field `file`) →
 * {file:{filename, path}, duration, amount, currency}. XMLHttpRequest, because
 * fetch reports no upload progress: onProgress gets whole percents as the
 * bytes leave the browser.
 * @param {File} file
 * @param {UploadOptions} [opts]
 * @returns {Promise<UploadAnswer>}
 */
export function uploadAudio(file, { onProgress, signal } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/services/sst/uploadaudio");
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress?.(uploadPercent(e.loaded, e.total));
    };
    xhr.onload = () => {
      let data = null;
      try {
        data = JSON.parse(xhr.responseText);
      } catch {
        /* not JSON: handled by answer() */
      }
      try {
        resolve(answer(xhr.status, data).data);
      } catch (err) {
        reject(err);
      }
    };
    xhr.onerror = () => reject(new ApiError("network_error", 0));
    xhr.onabort = () => reject(new DOMException("aborted", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort());
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}

/**
 * POST /services/vtt/analyzevideo {video} → {durationMinutes, durationSeconds, totalMinutes, duration, amount, currency, title?}.
 * @param {string} video the link
 * @param {CallOptions} [opts]
 * @returns {Promise<VideoAnalysis>}
 */
export async function analyzeVideo(video, opts) {
  return (await request("POST", "/services/vtt/analyzevideo", { video }, opts)).data;
}

/**
 * GET /payment/{service}/order?key= → {paid:false} or {paid:true, order:{id, status,
 * sessionId, url}}: whether the order of a page's order key is paid already.
 * @param {string} service
 * @param {string} key the page's order key
 * @param {CallOptions} [opts]
 * @returns {Promise<OrderByKey>}
 */
export async function orderByKey(service, key, opts) {
  const q = new URLSearchParams({ key });
  return (await request("GET", `/payment/${service}/order?${q}`, undefined, opts)).data;
}

/**
 * A transcription preview (POST /services/{sst,vtt}/preview): the first seconds of the
 * recording as the order's engine hears them.
 * @typedef {object} TranscriptPreview
 * @property {string} text the first lines ("" without speech)
 * @property {string} language the ISO 639-1 code heard, or the one asked for; "" if unknown
 * @property {number} seconds how many seconds of the recording it covers
 * @property {boolean} speech false when those seconds hold no speech
 */

/**
 * POST /services/{service}/preview {filePath | video, language, locale}: `{pending: true,
 * retryAfter}` (HTTP 202) while the preview is being made — the same body is posted again
 * after `retryAfter` seconds — then `{pending: false, preview}`. A refusal's ApiError carries
 * the seconds of its Retry-After (preview_budget_spent).
 * @param {string} service sst or vtt
 * @param {{filePath?: string, video?: string, language: string, locale: string}} payload
 * @param {CallOptions} [opts]
 * @returns {Promise<{pending: true, retryAfter: number} | {pending: false, preview: TranscriptPreview}>}
 */
export async function previewTranscript(service, payload, { signal } = {}) {
  let res;
  try {
    res = await fetch(`/services/${service}/preview`, {
      method: "POST",
      signal,
      headers: { Accept: "application/json", "Content-Type": "application/json" },
      body: JSON.stringify(payload),
    });
  } catch (err) {
    if (aborted(err)) throw err;
    throw new ApiError("network_error", 0);
  }
  const retryAfter = Number(res.headers?.get("Retry-After")) || 0;
  const data = await res.json().catch(() => null);
  try {
    const r = answer(res.status, data);
    if (r.status === 202) return { pending: true, retryAfter };
    return { pending: false, preview: r.data.data };
  } catch (err) {
    if (err instanceof ApiError) err.retryAfter = retryAfter;
    throw err;
  }
}

/**
 * POST /api/tts/preview {text, voice, speed, format, language, locale} → the audio of the
 * text's first ~200 characters, free (rate limited, cached by the server), and the names of
 * the engines that spoke it (several engines only; else empty).
 * @param {{text: string, voice: string, speed: number, format: string, language?: string, locale: string}} payload
 * @param {CallOptions} [opts]
 * @returns {Promise<{blob: Blob, engines: string[]}>}
 */
export async function previewTts(payload, { signal } = {}) {
  let res;
  try {
    res = await fetch("/api/tts/preview", {
      method: "POST",
      signal,
      headers: { Accept: "audio/*, application/json", "Content-Type": "application/json" },
      body: JSON.stringify(payload),
    });
  } catch (err) {
    if (aborted(err)) throw err;
    throw new ApiError("network_error", 0);
  }
  if (!res.ok) {
    let data = null;
    try {
      data = await res.json();
    } catch {
      /* not JSON */
    }
    answer(res.status, data); // throws
  }
  // With several engines, the server names those that spoke it (X-Preview-Engines).
  const engines = res.headers.get("X-Preview-Engines");
  return { blob: await res.blob(), engines: engines ? engines.split(", ") : [] };
}

/**
 * A cue of the transcript editor: times in whole milliseconds.
 * @typedef {object} Cue
 * @property {number} start
 * @property {number} end
 * @property {string} text
 * @property {string} [speaker] who speaks, where the engine told speakers apart ("A")
 */

/**
 * A delivered transcript as the editor opens it (GET /r/{token}/transcript).
 * @typedef {object} EditableTranscript
 * @property {string} language
 * @property {number} duration the latest a cue may end, in ms
 * @property {string} format the format ordered
 * @property {Cue[]} original the cues as delivered
 * @property {Cue[] | null} edited the visitor's saved cues, null before a save
 * @property {string} etag the version of the text (its ETag): a change names it, and is
 *   refused (edit_conflict) when another came first
 */

/** @param {string} token */
const transcriptPath = (token) => `/r/${encodeURIComponent(token)}/transcript`;

/** Transcripts asked for before the editor's chunk arrived (prefetchTranscript), by token. */
const prefetched = new Map();

/**
 * Starts GET /r/{token}/transcript while the editor's chunk loads, not after it; the
 * editor's first getTranscript of that token takes the answer. Nothing for an empty token.
 * @param {string} token
 */
export function prefetchTranscript(token) {
  if (!token || prefetched.has(token)) return;
  const answer = request("GET", transcriptPath(token)).then(editable);
  answer.catch(() => {}); // not unhandled: the editor that takes it handles its error
  prefetched.set(token, answer);
}

/**
 * The transcript, from prefetchTranscript's answer when one is waiting (which `opts` can no
 * longer abort).
 * @param {string} token the link's
 * @param {CallOptions} [opts]
 * @returns {Promise<EditableTranscript>}
 */
export async function getTranscript(token, opts) {
  const early = prefetched.get(token);
  if (early) {
    prefetched.delete(token);
    return early;
  }
  return editable(await request("GET", transcriptPath(token), undefined, opts));
}

/**
 * The transcript of a GET's answer, with its version.
 * @param {Answer} r
 * @returns {EditableTranscript}
 */
const editable = (r) => ({ ...r.data, etag: r.etag });

/**
 * Stores the visitor's cues over version `etag` of the text; answers them as stored, with
 * the new version. Rejects with edit_conflict when another change came first.
 * @param {string} token
 * @param {Cue[]} cues
 * @param {string} etag
 * @param {CallOptions} [opts]
 * @returns {Promise<{edited: Cue[], etag: string}>}
 */
export async function saveTranscript(token, cues, etag, opts) {
  const r = await request("PUT", transcriptPath(token), { cues }, { ...opts, ifMatch: etag });
  return { edited: r.data.edited, etag: r.etag };
}

/**
 * Removes the visitor's edit over version `etag`: the link serves the original again.
 * Answers the new version.
 * @param {string} token
 * @param {string} etag
 * @param {CallOptions} [opts]
 * @returns {Promise<string>}
 */
export async function revertTranscript(token, etag, opts) {
  return (await request("DELETE", transcriptPath(token), undefined, { ...opts, ifMatch: etag })).etag;
}

/**
 * What the /api page needs to sell credit.
 * @typedef {object} CreditConfig
 * @property {number} min the least credit one purchase buys, in cents
 * @property {number} max the most, in cents
 * @property {string} currency
 * @property {number} validDays how long credit lasts
 */

/**
 * GET /api/credit/config.
 * @param {CallOptions} [opts]
 * @returns {Promise<CreditConfig>}
 */
export async function getCreditConfig(opts) {
  return (await request("GET", "/api/credit/config", undefined, opts)).data;
}

/**
 * POST /payment/credit/create-checkout-session {order:{amount, email, emailVerify, locale}}.
 * @param {{amount: number, email: string, emailVerify: string, locale: string}} order
 * @param {CallOptions} [opts]
 * @returns {Promise<CheckoutSession>}
 */
export async function createCreditCheckout(order, opts) {
  return (await request("POST", "/payment/credit/create-checkout-session", { order }, opts)).data;
}

/**
 * A purchase's key as /services/credit tells it.
 * @typedef {object} CreditKey
 * @property {string} key in full the first time (full), masked after
 * @property {boolean} full
 * @property {number} balance in cents, fractional
 * @property {string} currency
 * @property {string} expiresAt RFC 3339
 */

/**
 * POST /services/credit {sessionId}: null (HTTP 202) until paid, then the key.
 * @param {string} sessionId
 * @param {CallOptions} [opts]
 * @returns {Promise<CreditKey | null>}
 */
export async function fetchCreditKey(sessionId, opts) {
  const { status, data } = await request("POST", "/services/credit", { sessionId }, opts);
  return status === 202 ? null : data.data;
}

/**
 * A key's balance and recent calls (GET /v1/credit, with the key).
 * @typedef {object} CreditBalance
 * @property {string} key masked
 * @property {number} balance in cents, fractional
 * @property {string} currency
 * @property {number} expires_at unix seconds
 * @property {{model: string, units: number, unit: string, cost: number, status: string, created_at: number}[]} calls
 */

/**
 * GET /v1/credit with `key` (its errors are OpenAI's: {error:{code}}).
 * @param {string} key
 * @param {CallOptions} [opts]
 * @returns {Promise<CreditBalance>}
 */
export async function creditBalance(key, { signal } = {}) {
  let res;
  try {
    res = await fetch("/v1/credit", { signal, headers: { Accept: "application/json", Authorization: `Bearer ${key.trim()}` } });
  } catch (err) {
    if (aborted(err)) throw err;
    throw new ApiError("network_error", 0);
  }
  const data = await res.json().catch(() => null);
  return answer(res.status, data).data;
}
