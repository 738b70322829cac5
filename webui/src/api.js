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
    /* not JSON: handled by answer() */
  }
  return answer(res.status, data);
}

/** The parsed answer of a call, or the ApiError it stands for. */
function answer(status, data) {
  const ok = status >= 200 && status < 300;
  if (!ok || !data || data.ok === false) {
    throw new ApiError(data?.error?.code || (ok ? "bad_response" : `http_${status}`), status, data);
  }
  return { status, data };
}

/** Upload progress in whole percent, never above 100. */
export function uploadPercent(loaded, total) {
  if (!(total > 0)) return 0;
  return Math.min(100, Math.floor((loaded / total) * 100));
}

/** GET /api/config: prices, limits, voices, formats, open services, payment mode. */
export async function getConfig(opts) {
  return (await request("GET", "/api/config", undefined, opts)).data;
}

/** The URL of a voice's sample audio, spoken in the interface language `locale` (en, jp, …). */
export function voiceSampleUrl(voice, locale = "en") {
  return `/api/tts/samples/${encodeURIComponent(voice)}?locale=${encodeURIComponent(locale)}`;
}

/**
 * POST /api/tts/quote {text, language, locale} → {language, detected, mixed, characters,
 * amount, currency}: the language the text will be spoken in (chosen or detected).
 */
export async function quoteTts(payload, opts) {
  return (await request("POST", "/api/tts/quote", payload, opts)).data;
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

/**
 * POST /services/sst/uploadaudio (multipart field `file`) →
 * {file:{filename, path}, duration, amount, currency}. XMLHttpRequest, because
 * fetch reports no upload progress: onProgress gets whole percents as the
 * bytes leave the browser.
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

/** POST /services/vtt/analyzevideo {video} → {durationMinutes, durationSeconds, totalMinutes, duration, amount, currency, title?}. */
export async function analyzeVideo(video, opts) {
  return (await request("POST", "/services/vtt/analyzevideo", { video }, opts)).data;
}

/**
 * GET /payment/{service}/order?key= → {paid:false} or {paid:true, order:{id, status,
 * sessionId, url}}: whether the order of a page's order key is paid already.
 */
export async function orderByKey(service, key, opts) {
  const q = new URLSearchParams({ key });
  return (await request("GET", `/payment/${service}/order?${q}`, undefined, opts)).data;
}

/**
 * POST /api/tts/preview {text, voice, speed, format, language, locale} → the audio of the
 * text's first ~200 characters, free (rate limited, cached by the server).
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
    if (err?.name === "AbortError") throw err;
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
  return res.blob();
}
