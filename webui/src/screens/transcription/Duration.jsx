import { useTranslation } from "react-i18next";
import { formatClock, formatDuration, splitDuration } from "../../lib/duration.js";

/** "Duration: 1 min 5 sec (1:05)", with a machine-readable <time>. */
export default function Duration({ seconds, locale, testId, labelKey = "transcribe.duration" }) {
  const { t } = useTranslation();
  const { minutes, seconds: s } = splitDuration(seconds);
  const words = `${formatDuration(seconds, locale)} (${formatClock(seconds)})`;
  return (
    <p className="info" data-testid={testId}>
      <time dateTime={`PT${minutes}M${s}S`}>{t(labelKey, { duration: words })}</time>
    </p>
  );
}
