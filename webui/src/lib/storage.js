// Browser storage of the flow (spec: "Entities and their fields"): each service's order under
// its own key ('tts', 'sst', 'vtt') and the checkout session id under 'sessionId'. Storage can be
// disabled (private mode, quota): every access tolerates that.

export const TTS_KEY = "tts";
export const STT_KEY = "sst"; // speech-to-text: the stored key keeps the wire name
export const VTT_KEY = "vtt";
/** The storage key of each service's order. */
export const ORDER_KEYS = { tts: TTS_KEY, sst: STT_KEY, vtt: VTT_KEY };
export const SESSION_KEY = "sessionId";
/** The /api page's credit form ({euros, email}), kept while its checkout is open (CreditPending). */
export const CREDIT_KEY = "credit";
export const LANG_KEY = "lang";

export function readJSON(key) {
  try {
    const raw = localStorage.getItem(key);
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

export function writeJSON(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    /* storage unavailable: the flow still works from the server's order */
  }
}

export function read(key) {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function write(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    /* ignored, see above */
  }
}

export function remove(key) {
  try {
    localStorage.removeItem(key);
  } catch {
    /* ignored, see above */
  }
}
