import { useEffect, useRef, useState } from "react";
import { ApiError, previewTranscript } from "../../api.js";

// The server answers 202 while it makes the preview; the page asks again this often
// (Retry-After, within these bounds) and gives up after MAX_WAIT_MS of asking.
const MIN_POLL_MS = 1000;
const MAX_POLL_MS = 5000;
const MAX_WAIT_MS = 90_000;

/** Resolves after `ms`, or at once when `signal` aborts. */
function wait(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * The free preview of the recording `target` ({filePath} of an upload, {video} of an analysed
 * link; null: none yet) in `language` ("" lets the engine tell): its state, one of
 *   {status: "off"}                              no target, or previews off here
 *   {status: "pending"}                          being made (posted again every ~1 s)
 *   {status: "ready", preview}                   {text, language, seconds, speech}
 *   {status: "spent", minutes}                   this hour's free previews are used up
 *   {status: "failed", code}                     it could not be made; the order is not affected
 * A 503 preview_unavailable turns it "off" for this page. A new target or language drops the
 * request in flight, and an answer that arrives for an old one is not taken.
 * `locale` (the interface language) goes with each request but does not redo it.
 */
export function usePreview(service, target, language, locale, enabled) {
  const [state, setState] = useState({ status: "off", of: "" });
  const [unavailable, setUnavailable] = useState(false);
  const localeRef = useRef(locale);
  localeRef.current = locale;
  const key = target && enabled && !unavailable ? JSON.stringify(target) : "";

  useEffect(() => {
    if (!key) return undefined;
    const ctl = new AbortController();
    const body = { ...JSON.parse(key), language };
    const of = JSON.stringify(body);
    const started = Date.now();
    const set = (s) => setState({ ...s, of });
    (async () => {
      for (;;) {
        let r;
        try {
          r = await previewTranscript(service, { ...body, locale: localeRef.current }, { signal: ctl.signal });
        } catch (err) {
          if (ctl.signal.aborted || err?.name === "AbortError") return;
          const code = err instanceof ApiError ? err.code : "network_error";
          if (code === "preview_unavailable") setUnavailable(true);
          else if (code === "preview_budget_spent") set({ status: "spent", minutes: Math.max(1, Math.ceil((err.retryAfter || 0) / 60)) });
          else set({ status: "failed", code });
          return;
        }
        if (ctl.signal.aborted) return; // a late answer for what is no longer asked
        if (!r.pending) {
          set({ status: "ready", preview: r.preview });
          return;
        }
        if (Date.now() - started >= MAX_WAIT_MS) {
          set({ status: "failed", code: "preview_timeout" });
          return;
        }
        await wait(Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, r.retryAfter * 1000)), ctl.signal);
        if (ctl.signal.aborted) return;
      }
    })();
    return () => ctl.abort();
  }, [service, key, language]);

  if (!key) return { status: "off" };
  // Until the answer for this very recording and language is in, it is pending: from the
  // render that shows the price on (the block's room is taken at once), and never an answer
  // made for another file or language.
  return state.of === JSON.stringify({ ...JSON.parse(key), language }) ? state : { status: "pending" };
}
