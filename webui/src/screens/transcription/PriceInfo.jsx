import { useTranslation } from "react-i18next";
import { perMinuteCents } from "../../lib/pricing.js";

/** The price rule of a transcription service, from config (per minute when the unit is 60 seconds). */
export default function PriceInfo({ price, money, locale }) {
  const { t } = useTranslation();
  const min = money(price.minAmount || 0);
  const text =
    price.perSeconds === 60
      ? t("transcribe.priceMinute", { price: money(price.unitAmount), min })
      : t("transcribe.priceSeconds", {
          price: money(price.unitAmount),
          seconds: new Intl.NumberFormat(locale).format(price.perSeconds),
          perMinute: money(perMinuteCents(price)),
          min,
        });
  return (
    <p className="info" data-testid="price-info">
      {text}
    </p>
  );
}
