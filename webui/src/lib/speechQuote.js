import { useEffect, useState } from "react";
import { quoteTts } from "../api.js";
import { blankText } from "./pricing.js";

/** How long the page waits after the last keystroke before asking for a quote. */
export const QUOTE_DELAY_MS = 400;

/**
 * The server's quote for a text: {language, detected, mixed, engines} once it answers
 * (engines: which engine reads which of its languages, with several engines only),
 * {error: code} when it refuses (language_unsupported), null while there is
 * nothing to ask or the answer is pending. Asked QUOTE_DELAY_MS after the last
 * change, the previous request aborted. `enabled` false (an engine that names
 * no languages) asks nothing.
 */
export function useSpeechQuote({ text, language, locale, enabled }) {
  const [quote, setQuote] = useState(null);
  useEffect(() => {
    setQuote(null);
    if (!enabled || blankText(text)) return undefined;
    const ctl = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const q = await quoteTts({ text, language, locale }, { signal: ctl.signal });
        setQuote({ language: q.language, detected: q.detected, mixed: q.mixed, engines: q.engines });
      } catch (err) {
        if (err?.name === "AbortError") return;
        // Only a refusal of the language is the visitor's to fix here; the rest
        // (too long, network) is said elsewhere or at checkout.
        setQuote(err?.code === "language_unsupported" ? { error: err.code } : null);
      }
    }, QUOTE_DELAY_MS);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [text, language, locale, enabled]);
  return quote;
}
