import { useTranslation } from "react-i18next";

/** The "Translate into English" checkbox of both transcription pages, with what it means. */
export default function TranslateOption({ translate, onTranslate }) {
  const { t } = useTranslation();
  return (
    <div className="field translate">
      <label className="check">
        <input type="checkbox" checked={translate} onChange={(e) => onTranslate(e.target.checked)} aria-describedby="translate-hint" data-testid="translate" />
        {t("transcribe.translate")}
      </label>
      <p className="hint" id="translate-hint">
        {t("transcribe.translateHint")}
      </p>
    </div>
  );
}
