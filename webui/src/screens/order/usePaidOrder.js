import { useEffect, useRef, useState } from "react";
import { isOrderKey, orderKey, orderKeyName, paidOrder, renewOrderKey, storedOrderKey } from "../../lib/orderKey.js";

/**
 * The page's order key and whether its order is paid already. The key is the stored one
 * when the page opens (made now if there is none) and stays the page's own while it is
 * open; another tab's new key is taken up. The server is asked before the page offers to
 * pay (in another tab, or before Back): on load, when the page comes back from the
 * browser's cache, when the tab is shown again, and when another tab changes the key.
 * Returns {paid, setPaid, startNew, keyOf}: startNew keeps the form's values and makes the
 * next checkout a new payment; keyOf() is the key to send.
 */
export function usePaidOrder(service) {
  const [paid, setPaid] = useState(null);
  const key = useRef("");
  const fresh = useRef(false); // a key made just now: nothing can have paid it yet
  if (!key.current) {
    fresh.current = !storedOrderKey(service);
    key.current = orderKey(service);
  }
  useEffect(() => {
    let ctl = null;
    const ask = () => {
      ctl?.abort();
      ctl = new AbortController();
      const mine = ctl;
      paidOrder(service, key.current, { signal: mine.signal })
        .then((o) => {
          // Only ever upgrades: a paid order stays paid (a late "not paid" answer must not
          // hide a refusal); a new key clears it where the key changes.
          if (o && !mine.signal.aborted) setPaid(o);
        })
        .catch(() => {});
    };
    const onShow = (e) => e.persisted && ask();
    const onVisible = () => document.visibilityState === "visible" && ask();
    const onStorage = (e) => {
      if (e.key !== orderKeyName(service) || !isOrderKey(e.newValue)) return;
      if (e.newValue === key.current) return;
      key.current = e.newValue;
      setPaid(null);
      ask();
    };
    if (!fresh.current) ask();
    window.addEventListener("pageshow", onShow);
    document.addEventListener("visibilitychange", onVisible);
    window.addEventListener("storage", onStorage);
    return () => {
      ctl?.abort();
      window.removeEventListener("pageshow", onShow);
      document.removeEventListener("visibilitychange", onVisible);
      window.removeEventListener("storage", onStorage);
    };
  }, [service]);
  const startNew = () => {
    key.current = renewOrderKey(service);
    setPaid(null);
  };
  return { paid, setPaid, startNew, keyOf: () => key.current };
}
