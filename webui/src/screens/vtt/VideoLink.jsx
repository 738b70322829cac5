import { useTranslation } from "react-i18next";
import { formatLimit } from "../../lib/duration.js";
import ErrorNote from "../order/ErrorNote.jsx";
import Field from "../order/Field.jsx";
import Duration from "../transcription/Duration.jsx";
import Speech from "../transcription/Speech.jsx";

/**
 * Step 1 of /vtt: the link and the Analyze button; once the server has
 * analysed the link, the link shown back as the chosen file, its title, its
 * duration and the cost (the cost only then, spec: "Screens and routes").
 */
export default function VideoLink({ link, onLink, onAnalyze, analyzing, error, quote, cost, maxSeconds, locale }) {
  const { t } = useTranslation();
  return (
    <>
      {/* noValidate: the browser's own check of type="url" would stop a link without a scheme with
          a tooltip in the browser's language; the app's check (the server's, unsupported_link)
          answers it in the visitor's. */}
      <form
        className="link-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          onAnalyze();
        }}
      >
        <Field
          id="video-link"
          label={t("vtt.linkLabel")}
          row="link-row"
          type="url"
          inputMode="url"
          autoComplete="url"
          placeholder="https://"
          value={link}
          onValue={onLink}
          aria-describedby="video-link-hint"
          aria-invalid={error ? true : undefined}
          dir="ltr"
        >
          <button type="submit" className="primary" disabled={analyzing} aria-busy={analyzing || undefined} data-testid="analyze">
            {analyzing ? t("vtt.analyzing") : t("vtt.analyze")}
          </button>
        </Field>
      </form>
      <div id="video-link-hint">
        <p className="hint">{t("vtt.linkHint")}</p>
        {maxSeconds > 0 && <p className="hint">{t("vtt.maxDuration", { duration: formatLimit(maxSeconds, locale) })}</p>}
      </div>
      <ErrorNote code={error} />
      <div aria-live="polite">
        {quote && (
          <div className="quote" data-testid="analysis">
            {/* U+2068…U+2069 isolate the link, so a URL reads left to right inside Arabic text. */}
            <p className="info chosen-link">{t("vtt.chosen", { link: `\u2068${quote.link}\u2069` })}</p>
            {quote.title && <p className="info">{t("vtt.videoTitle", { title: quote.title })}</p>}
            <Duration seconds={quote.duration} locale={locale} testId="duration" />
            <Speech speech={quote.speechSeconds} seconds={quote.duration} locale={locale} unmeasured />
            <p className="info">
              <strong data-testid="cost">{t("vtt.cost", { price: cost })}</strong>
            </p>
          </div>
        )}
      </div>
    </>
  );
}
