import { useTranslation } from "react-i18next";

/** An API error code in the visitor's language; unknown codes get the generic message. */
export default function ErrorNote({ code, id }) {
  const { t, i18n } = useTranslation();
  if (!code) return null;
  const key = i18n.exists(`errors.${code}`) ? `errors.${code}` : "errors.internal";
  return (
    <p className="warning error" role="alert" id={id} data-testid="error" data-code={code}>
      {t(key)}
    </p>
  );
}
