import LanguageList from "../order/LanguageList.jsx";
import PriceInfo from "./PriceInfo.jsx";
import SpokenLanguage from "./SpokenLanguage.jsx";
import TranslateOption from "./TranslateOption.jsx";

/** What step 1 of both transcription pages states and asks besides the media: languages, price rule, spoken language, translation. */
export default function LanguageAndPrice({ languages, price, language, onLanguage, translate, onTranslate, money, locale }) {
  return (
    <>
      <LanguageList locale={locale} codes={languages} />
      <PriceInfo price={price} money={money} locale={locale} />
      <SpokenLanguage codes={languages} value={language} onChange={onLanguage} locale={locale} />
      <TranslateOption translate={translate} onTranslate={onTranslate} />
    </>
  );
}
