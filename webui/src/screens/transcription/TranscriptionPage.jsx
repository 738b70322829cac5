import { Children } from "react";
import { useTranslation } from "react-i18next";
import { useConfig } from "../../config.jsx";
import ServiceClosed from "../closed/ServiceClosed.jsx";
import PaidNotice from "../order/PaidNotice.jsx";
import Step from "../order/Step.jsx";
import DeliverySteps from "./DeliverySteps.jsx";
import Intro from "./Intro.jsx";
import LanguageAndPrice from "./LanguageAndPrice.jsx";
import TranscriptPreview from "./TranscriptPreview.jsx";
import { usePreview } from "./usePreview.js";

/** The props of <LanguageAndPrice>: the service's languages and price, the order's spoken language and translation. */
function facts({ languages, price }, order) {
  const { language, setLanguage, translate, setTranslate, canTranslate } = order;
  return { languages, price, language, onLanguage: setLanguage, translate, onTranslate: setTranslate, canTranslate };
}

/** The props of <DeliverySteps> but those of the quote: the service's formats, the order's format, e-mails and payment. */
function steps(service, { formats }, order) {
  const { format, setFormat, email, emailVerify, setEmail, setEmailVerify, testMode, paying, paid } = order;
  return { service, formats, format, onFormat: setFormat, email, emailVerify, onEmail: setEmail, onEmailVerify: setEmailVerify, testMode, paying, paid };
}

/**
 * The frame both transcription pages share (spec: "Screens and routes"), or the closed
 * notice when the service is closed: the intro; step 1 (`media`, then the
 * languages, the price rule and the spoken language); the page's own steps
 * (`children`, numbered from 2); then the delivery steps numbered after them.
 * `order` is what useOrder returned, `costCents` the server's quote (0 while
 * there is none) and `onPay` the page's pay action. `previewOf` is the priced recording
 * ({filePath} of an upload, {video} of a link; null before) whose first seconds are shown
 * under the price (issue 46), when config.preview.enabled.
 */
export default function TranscriptionPage({ service, stepId, media, order, costCents, onPay, previewOf = null, children }) {
  const config = useConfig();
  const { t, i18n } = useTranslation();
  const { open, money, locale } = order;
  const previewSeconds = config.preview?.seconds || 0;
  const preview = usePreview(service, open ? previewOf : null, order.language, i18n.language, config.preview?.enabled === true && previewSeconds > 0);
  if (!open) return <ServiceClosed service={service} reason={config.services[service].reason} />;
  const block = (
    <TranscriptPreview state={preview} seconds={previewSeconds} codes={config[service].languages} language={order.language} onLanguage={order.setLanguage} locale={locale} />
  );
  return (
    <article className={service}>
      <Intro service={service} engine={config[service].engine} />
      {order.paid && <PaidNotice order={order.paid} onNew={order.startNew} />}
      <ol className="steps">
        <Step n={1} id={stepId} title={t(`${service}.step1`)}>
          {media}
          <LanguageAndPrice {...facts(config[service], order)} money={money} locale={locale} preview={block} />
        </Step>
        {children}
        <DeliverySteps n={2 + Children.toArray(children).length} {...steps(service, config[service], order)} costCents={costCents} money={money} onPay={onPay} />
      </ol>
    </article>
  );
}
