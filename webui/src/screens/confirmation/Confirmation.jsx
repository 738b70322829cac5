import { useEffect, useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import { fetchResult, lookupSession } from "../../api.js";
import { useConfig } from "../../config.jsx";
import i18n from "../../i18n.js";
import { languageById } from "../../languages.js";
import { formatMoney } from "../../lib/pricing.js";
import { forgetOrderKey, renewOrderKey } from "../../lib/orderKey.js";
import { ORDER_KEYS, read, readJSON, remove, SESSION_KEY } from "../../lib/storage.js";
import { Link, navigate } from "../../router.jsx";

// How long to keep asking while the payment is not yet confirmed (402):
// a card payment can take a few seconds to reach the server after the redirect.
const MAX_UNPAID_POLLS = 30;

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const id = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(id);
      reject(new DOMException("aborted", "AbortError"));
    });
  });
}

/** Poll interval: every second for the first minute, then every three. */
export function pollDelay(attempt) {
  return attempt < 60 ? 1000 : 3000;
}

/** The session id of the order being confirmed: the return URL's, else the stored one. */
function initialSessionId() {
  return new URLSearchParams(window.location.search).get("session_id") || read(SESSION_KEY) || "";
}

/**
 * The confirmation page of a paid order (service: tts, sst or vtt). It looks
 * the session up, follows the order's progress until the file exists, then
 * shows the download link.
 */
export default function Confirmation({ service }) {
  const { t } = useTranslation();
  const config = useConfig();
  const [sessionId] = useState(initialSessionId);
  // The address the visitor typed, kept on their own device: the server forgets it once
  // the message is sent, and the page still says where the link went.
  const [typedEmail] = useState(() => readJSON(ORDER_KEYS[service])?.email || "");
  const [state, setState] = useState({ phase: "processing", order: null, email: "", link: "", unpaid: false, confirmed: false });

  useEffect(() => {
    // Read once, then removed (spec: "Entities and their fields"); the id lives on in this component.
    remove(SESSION_KEY);
    const ctl = new AbortController();
    const fail = () => {
      window.alert(i18n.t("confirm.somethingWrong"));
      navigate("/", { replace: true });
    };
    if (!sessionId) {
      fail();
      return undefined;
    }
    (async () => {
      const session = await lookupSession(service, sessionId, { signal: ctl.signal });
      if (session.status !== "complete" && session.payment_status !== "paid") {
        // A checkout that was cancelled or left (a stale id): nothing was paid, so back to
        // the form, which the page restores from storage; never "Payment successful".
        navigate(`/${service}`, { replace: true });
        return;
      }
      setState((s) => ({ ...s, email: session.email || typedEmail, order: session.order || null, confirmed: true }));
      let unpaid = 0;
      for (let attempt = 0; ; attempt++) {
        try {
          const r = await fetchResult(service, sessionId, { signal: ctl.signal });
          if (r.ready) {
            // Delivered: the order is done with; the interface language stays.
            remove(ORDER_KEYS[service]);
            forgetOrderKey(service);
            setState((s) => ({ ...s, phase: "done", link: r.link, order: r.order || s.order }));
            return;
          }
          setState((s) => ({ ...s, order: r.order || s.order, unpaid: false }));
        } catch (err) {
          if (err?.code !== "payment_required" || ++unpaid > MAX_UNPAID_POLLS) throw err;
          setState((s) => ({ ...s, unpaid: true }));
        }
        await sleep(pollDelay(attempt), ctl.signal);
      }
    })().catch((err) => {
      if (ctl.signal.aborted || err?.name === "AbortError") return;
      // The refusal carries the order: its amount and why it was refunded.
      if (err?.code === "order_refunded") setState((s) => ({ ...s, phase: "refunded", order: err.body?.order || s.order }));
      else if (err?.code === "order_expired") setState((s) => ({ ...s, phase: "expired" }));
      else fail();
    });
    return () => ctl.abort();
  }, [service, sessionId]);

  if (state.phase === "refunded" || state.phase === "expired") {
    return (
      <section className="card notice" role="alert">
        <h1>{t(`confirm.${state.phase}Title`)}</h1>
        <p>{t(`confirm.${state.phase}`)}</p>
        {state.phase === "refunded" && <RefundDetails order={state.order} />}
        <p>
          <a
            href={`/${service}`}
            className="button"
            data-testid="place-new-order"
            onClick={(e) => {
              e.preventDefault();
              // A new order: a new key (a new payment), the old values still in the form.
              renewOrderKey(service);
              navigate(`/${service}`);
            }}
          >
            {t("confirm.newOrder")}
          </a>
        </p>
      </section>
    );
  }

  if (state.phase === "done") {
    const file = service === "tts" ? "audio" : state.order?.translate ? "translation" : "transcript";
    return (
      <section className="card success" data-testid="success">
        <h1>{t("confirm.successTitle")}</h1>
        <p>
          {state.email ? (
            <Trans i18nKey={`confirm.sentTo.${file}`} values={{ email: state.email }} components={{ email: <bdi className="email" dir="ltr" data-testid="email" /> }} />
          ) : (
            t(`confirm.sentToYou.${file}`)
          )}
        </p>
        <p>{t("confirm.checkInbox")}</p>
        <p className="download">
          <a href={state.link} download className="button primary" data-testid="download">
            {t("confirm.download")}
          </a>
        </p>
        <p className="hint">{t("confirm.rightClick")}</p>
        <p className="highlight" role="note">
          {t("confirm.expiry", { days: config?.linkDays ?? 10 })}
        </p>
        <p>{t("confirm.thanks")}</p>
      </section>
    );
  }

  const progress = Math.max(0, Math.min(100, Number(state.order?.progress) || 0));
  const failing = state.order?.status === "failed";
  const position = Number(state.order?.queuePosition) || 0;
  const detail = state.unpaid
    ? t("confirm.waitingPayment")
    : failing
      ? t("confirm.failing")
      : position > 0
        ? t("confirm.queuePosition", { position })
        : t("confirm.progress", { p: progress });
  // One line: what is happening, with the progress or, while waiting, the place in the queue.
  return (
    <section className="card processing">
      <h1>{state.confirmed && !state.unpaid ? t("confirm.paid") : t("confirm.waitingPayment")}</h1>
      <div className="progress" role="status" aria-live="polite" data-testid="progress">
        <span className="spinner" aria-hidden="true" />
        <span className="progress-line">
          {t("confirm.processing")}
          <span aria-hidden="true"> · </span>
          <span data-testid="progress-detail">{detail}</span>
        </span>
        <progress max={100} value={position > 0 ? 0 : progress} aria-label={t("confirm.progressLabel")} />
      </div>
    </section>
  );
}

/** What a refunded order's page says besides the refund: how much, why, and that nothing was kept. */
function RefundDetails({ order }) {
  const { t, i18n } = useTranslation();
  const reasons = ["source_changed", "source_gone", "upload_missing", "payment_late", "upload_taken", "no_speech", "translation_unavailable", "engine_refused", "production_failed", "amount_mismatch"];
  const reason = reasons.includes(order?.error) ? order.error : "other";
  // A mismatched payment was not the order's price: the letter names no amount either.
  const amount = reason !== "amount_mismatch" && order?.amount > 0 ? formatMoney(order.amount, order.currency || "eur", languageById(i18n.language).tag) : "";
  return (
    <>
      <p data-testid="refund-reason">{t(`confirm.refundReason.${reason}`)}</p>
      {amount && <p data-testid="refund-amount">{t("confirm.refundedAmount", { amount })}</p>}
      <p>{t("confirm.refundedKept")}</p>
    </>
  );
}
