import { useMemo } from "react";
import { useTranslation } from "react-i18next";
import LanguageList from "../order/LanguageList.jsx";
import Step from "../order/Step.jsx";
import LanguageField from "./LanguageField.jsx";

/**
 * Step 2: supported languages (the engine's own list; with several engines, which
 * reads which: config's tts.engines), the language of the
 * text (detected or chosen), the price rule (config's tts.price: per started
 * block of characters, or charged by the character, and any minimum), the text
 * and its live cost; a `blank` text (only white space) has no cost, and says why.
 */
export default function TextStep({ text, onText, chars, blank, costText, price, money, maxChars, locale, languages, readers, language, onLanguage, quote }) {
  const { t } = useTranslation();
  const nf = useMemo(() => new Intl.NumberFormat(locale), [locale]);
  const tooLong = maxChars > 0 && chars > maxChars;
  const per = nf.format(price.per);
  return (
    <Step n={2} id="text" title={t("tts.step2")}>
      <LanguageList locale={locale} codes={languages?.length ? languages : undefined} readers={readers} />
      <p className="info">{t("tts.costInfo", { chars: per })}</p>
      <p className="info">{t(price.rounding === "started" ? "tts.priceInfo" : "tts.priceInfoProportional", { price: money(price.unitAmount), chars: per, count: price.per })}</p>
      {price.minAmount > 0 && <p className="info">{t("tts.priceMinimum", { min: money(price.minAmount) })}</p>}
      <label htmlFor="tts-text" className="sr-only">
        {t("tts.textLabel")}
      </label>
      <textarea
        id="tts-text"
        rows={8}
        // The visitor's text runs in its own direction: English in the Arabic interface
        // reads "English (version 2.0)", not ".English (version 2.0)".
        dir="auto"
        value={text}
        placeholder={t("tts.placeholder")}
        onChange={(e) => onText(e.target.value)}
        aria-describedby="tts-max tts-count"
        aria-invalid={tooLong || blank || undefined}
      />
      <p id="tts-max" className="hint">
        {t("tts.maxChars", { max: nf.format(maxChars), count: maxChars })}
      </p>
      <div id="tts-count">
        {chars > 0 && (
          <p className="count">
            <span data-testid="char-count">{t("tts.charCount", { n: nf.format(chars) })}</span>
            {!blank && (
              <>
                <span className="sep" aria-hidden="true">
                  ·
                </span>
                <strong data-testid="cost">{t("tts.cost", { price: costText })}</strong>
              </>
            )}
          </p>
        )}
        {blank && (
          <p className="warning" role="alert" data-testid="blank-text">
            {t("tts.blankText")}
          </p>
        )}
      </div>
      {languages?.length > 0 && <LanguageField languages={languages} locale={locale} value={language} onChange={onLanguage} quote={quote} />}
      {tooLong && (
        <p className="warning" role="alert">
          {t("tts.tooLong", { n: nf.format(chars), max: nf.format(maxChars), count: chars })}
        </p>
      )}
    </Step>
  );
}
