import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import LanguageList from "../order/LanguageList.jsx";
import Step from "../order/Step.jsx";

/** Step 2: supported languages, the price rule, the text and its live cost. */
export default function TextStep({ text, onText, chars, costText, unitChars, unitPrice, maxChars, locale }) {
  const { t } = useTranslation();
  const nf = useMemo(() => new Intl.NumberFormat(locale), [locale]);
  const tooLong = maxChars > 0 && chars > maxChars;
  return (
    <Step n={2} id="text" title={t("tts.step2")}>
      <LanguageList locale={locale} />
      <p className="info">{t("tts.costInfo", { chars: nf.format(unitChars) })}</p>
      <p className="info">{t("tts.priceInfo", { price: unitPrice, chars: nf.format(unitChars) })}</p>
      <label htmlFor="tts-text" className="sr-only">
        {t("tts.textLabel")}
      </label>
      <textarea
        id="tts-text"
        rows={8}
        value={text}
        placeholder={t("tts.placeholder")}
        onChange={(e) => onText(e.target.value)}
        aria-describedby="tts-max tts-count"
        aria-invalid={tooLong || undefined}
      />
      <p id="tts-max" className="hint">
        {t("tts.maxChars", { max: nf.format(maxChars) })}
      </p>
      <div id="tts-count">
        {chars > 0 && (
          <p className="count">
            <span data-testid="char-count">{t("tts.charCount", { n: nf.format(chars) })}</span>
            <span className="sep" aria-hidden="true">
              ·
            </span>
            <strong data-testid="cost">{t("tts.cost", { price: costText })}</strong>
          </p>
        )}
      </div>
      {tooLong && (
        <p className="warning" role="alert">
          {t("tts.tooLong", { n: nf.format(chars), max: nf.format(maxChars) })}
        </p>
      )}
    </Step>
  );
}
