import { useEffect, useState } from "react";
import { orderKeyName, paidOrder, renewOrderKey } from "../../lib/orderKey.js";

/**
 * Asks the server, before the page offers to pay, whether the service's open order is
 * paid already (in another tab, or before Back): on load, when the page comes back from
 * the browser's cache, when the tab is shown again, and when another tab changes the key.
 * Returns [paid order or null, setPaid, startNew]: startNew keeps the form's values and
 * makes the next checkout a new payment.
 */
export function usePaidOrder(service) {
  const [paid, setPaid] = useState(null);
  useEffect(() => {
    let ctl = null;
    const ask = () => {
      ctl?.abort();
      ctl = new AbortController();
      const mine = ctl;
      paidOrder(service, { signal: mine.signal })
        .then((o) => {
          if (!mine.signal.aborted) setPaid(o);
        })
        .catch(() => {});
    };
    const onShow = (e) => e.persisted && ask();
    const onVisible = () => document.visibilityState === "visible" && ask();
    const onStorage = (e) => e.key === orderKeyName(service) && ask();
    ask();
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
    renewOrderKey(service);
    setPaid(null);
  };
  return [paid, setPaid, startNew];
}
