import { useTranslation } from "react-i18next";
import { formatDuration, speechAmount } from "../../lib/duration.js";

/**
 * How much of the recording is speech, as the server measured it: "About 3
 * minutes of speech in 10 min." `speech` is whole seconds, or null when the
 * server could not measure it before payment (a video link it does not
 * decode), which is said instead when `unmeasured` is set.
 */
export default function Speech({ speech, seconds, locale, unmeasured = false }) {
  const { t } = useTranslation();
  const amount = speechAmount(speech);
  if (!amount) {
    return unmeasured ? (
      <p className="hint" data-testid="speech">
        {t("transcribe.speechUnmeasured")}
      </p>
    ) : null;
  }
  return (
    <p className="info" data-testid="speech">
      {t(`transcribe.${amount.key}`, { count: amount.count, duration: formatDuration(seconds, locale) })}
    </p>
  );
}
