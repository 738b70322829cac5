import { useTranslation } from "react-i18next";
import { perMinuteCents } from "../../lib/pricing.js";

/**
 * The price rule of a transcription service as config publishes it
 * ({unitAmount, per, rounding, minAmount}), in words: per minute when the unit
 * is 60 seconds, charged by the second ("proportional") or per started unit
 * ("started").
 */
export default function PriceInfo({ price, money, locale }) {
  const { t } = useTranslation();
  const started = price.rounding === "started";
  const args = {
    price: money(price.unitAmount),
    seconds: new Intl.NumberFormat(locale).format(price.per),
    perMinute: money(perMinuteCents(price)),
    min: money(price.minAmount || 0),
  };
  const key = `transcribe.price${started ? "Started" : ""}${price.per === 60 ? "Minute" : "Seconds"}`;
  return (
    <p className="info" data-testid="price-info">
      {t(key, args)}
    </p>
  );
}
