import { useLayoutEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { languageOptions, useLanguageOptions } from "../../lib/inputLanguages.js";

/**
 * "Read before you pay" (issue 46): the first seconds of the recording as the order's engine
 * transcribes them, under the price, with the language heard and "Not what you expected?",
 * which sets the order's spoken language (`onLanguage`; the preview is then made again for
 * it). `state` is usePreview's. Its room is taken from the moment the price shows: the
 * pending line and the text fill the same fixed box, the text clamped to a few lines until
 * the visitor asks for all of it, so nothing below moves when the text arrives.
 */
export default function TranscriptPreview({ state, seconds, codes, language, onLanguage, locale }) {
  const { t } = useTranslation();
  if (state.status === "off") return null;
  const preview = state.status === "ready" ? state.preview : null;
  const spoken = preview?.speech !== false && preview?.text ? preview : null;
  return (
    <section className="transcript-preview" aria-labelledby="transcript-preview-title" data-testid="transcript-preview" data-status={state.status}>
      {spoken ? (
        <Text key={spoken.text} preview={spoken} title={t("transcribe.preview.title")} />
      ) : (
        <>
          <h3 className="preview-title" id="transcript-preview-title">
            {t("transcribe.preview.title")}
          </h3>
          <div className="preview-body" aria-live="polite">
            <Note state={state} preview={preview} seconds={seconds} />
          </div>
        </>
      )}
      <div className="preview-meta" aria-live="polite">
        {state.status === "pending" && (
          <p className="hint" data-testid="preview-pending">
            {t("transcribe.preview.listening", { count: seconds })}
          </p>
        )}
        {spoken && <Heard preview={spoken} codes={codes} language={language} onLanguage={onLanguage} locale={locale} />}
      </div>
    </section>
  );
}

/** The heading, and the first lines in a quote-like box, clamped until "Show all". */
function Text({ preview, title }) {
  const { t } = useTranslation();
  const box = useRef(null);
  const [clipped, setClipped] = useState(false);
  const [open, setOpen] = useState(false);
  useLayoutEffect(() => {
    const el = box.current;
    if (el && !open) setClipped(el.scrollHeight > el.clientHeight + 1);
  }, [open]);
  return (
    <>
      <div className="preview-head">
        <h3 className="preview-title" id="transcript-preview-title">
          {title}
        </h3>
        {(clipped || open) && (
          <button type="button" className="link-button" aria-expanded={open} aria-controls="transcript-preview-text" onClick={() => setOpen(!open)} data-testid="preview-more">
            {open ? t("transcribe.preview.less") : t("transcribe.preview.more")}
          </button>
        )}
      </div>
      <div className="preview-body">
        <blockquote
          ref={box}
          id="transcript-preview-text"
          className={open ? "preview-text open" : "preview-text"}
          dir="auto"
          lang={preview.language || undefined}
          data-testid="preview-text"
        >
          {preview.text}
        </blockquote>
      </div>
    </>
  );
}

/** What stands in the box when there is no text to show: the wait, no speech, or why there is none. */
function Note({ state, preview, seconds }) {
  const { t } = useTranslation();
  if (state.status === "pending") {
    return (
      <div className="preview-skeleton" aria-hidden="true">
        <span />
        <span />
        <span />
      </div>
    );
  }
  if (state.status === "spent") {
    return (
      <p className="hint" data-testid="preview-note" data-code="preview_budget_spent">
        {t("errors.preview_budget_spent")} {t("transcribe.preview.freeAgain", { count: state.minutes })}
      </p>
    );
  }
  if (state.status === "failed") {
    return (
      <p className="hint" data-testid="preview-note" data-code={state.code}>
        {t("errors.preview_failed")}
      </p>
    );
  }
  // Ready without text: nothing heard in the seconds the preview covers.
  return (
    <p className="info" data-testid="preview-note" data-code="no_speech">
      {t("transcribe.preview.noSpeech", { count: preview?.seconds || seconds })}
    </p>
  );
}

/**
 * "Heard: English" (or the language the visitor chose), and "Not what you expected?", which
 * opens the engine's languages; picking one sets the order's spoken language.
 */
function Heard({ preview, codes, language, onLanguage, locale }) {
  const { t } = useTranslation();
  const options = useLanguageOptions(locale, codes);
  const [picking, setPicking] = useState(false);
  const code = preview.language || language;
  const name = code ? (options.find((o) => o.code === code) || languageOptions(locale, [code])[0])?.name : "";
  const said = !name ? t("transcribe.preview.heardNothing") : language ? t("transcribe.preview.chosen", { language: name }) : t("transcribe.preview.heard", { language: name });
  if (picking) {
    return (
      <div className="preview-pick">
        <label htmlFor="preview-language">{t("transcribe.preview.pick")}</label>
        <select
          id="preview-language"
          value={code && options.some((o) => o.code === code) ? code : ""}
          onChange={(e) => {
            setPicking(false);
            onLanguage(e.target.value);
          }}
          data-testid="preview-language"
        >
          <option value="">{t("transcribe.detect")}</option>
          {options.map((o) => (
            <option key={o.code} value={o.code}>
              {o.name}
            </option>
          ))}
        </select>
      </div>
    );
  }
  return (
    <p className="hint preview-heard">
      <span data-testid="preview-heard">{said}</span>{" "}
      <button type="button" className="link-button" onClick={() => setPicking(true)} data-testid="preview-wrong">
        {t("transcribe.preview.wrong")}
      </button>
    </p>
  );
}
