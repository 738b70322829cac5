import LanguageList from "../order/LanguageList.jsx";
import PriceInfo from "./PriceInfo.jsx";
import SpokenLanguage from "./SpokenLanguage.jsx";
import TranslateOption from "./TranslateOption.jsx";

/**
 * What step 1 of both transcription pages states and asks besides the media: languages, price
 * rule, the free preview of the recording (`preview`, once it is priced), spoken language,
 * translation (when the engine can translate).
 */
export default function LanguageAndPrice({ languages, price, language, onLanguage, translate, onTranslate, canTranslate = true, money, locale, preview }) {
  return (
    <>
      <LanguageList locale={locale} codes={languages} />
      <PriceInfo price={price} money={money} locale={locale} />
      {preview}
      <SpokenLanguage codes={languages} value={language} onChange={onLanguage} locale={locale} />
      {canTranslate && <TranslateOption translate={translate} onTranslate={onTranslate} />}
    </>
  );
}
