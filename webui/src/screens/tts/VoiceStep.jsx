import { useTranslation } from "react-i18next";
import { voiceSampleUrl } from "../../api.js";
import { formatSpeed, parseSpeed } from "../../lib/speed.js";
import Field from "../order/Field.jsx";
import SamplePlayer from "./SamplePlayer.jsx";
import Step from "../order/Step.jsx";
import { voiceName } from "../../lib/voices.js";

/** Step 1: the voice cards with their samples, and the speed slider. */
export default function VoiceStep({ voices, voice, onVoice, speed, onSpeed, speedRange }) {
  const { t, i18n } = useTranslation();
  return (
    <Step n={1} id="voice" title={t("tts.step1")}>
      <fieldset className="voices">
        <legend className="sr-only">{t("tts.step1")}</legend>
        {voices.map((v) => (
          <div key={v} className={`voice-card${v === voice ? " selected" : ""}`} data-voice={v}>
            <label className="voice-pick">
              <input type="radio" name="voice" value={v} checked={v === voice} onChange={() => onVoice(v)} />
              <span className="voice-name">{voiceName(v)}</span>
            </label>
            <SamplePlayer src={voiceSampleUrl(v, i18n.language)} voice={voiceName(v)} onPlay={() => onVoice(v)} />
          </div>
        ))}
      </fieldset>
      <Field
        id="speed"
        className="speed"
        label={t("tts.speed")}
        type="range"
        min={speedRange.min}
        max={speedRange.max}
        step={speedRange.step}
        value={speed}
        aria-valuetext={formatSpeed(speed)}
        onValue={(v) => onSpeed(parseSpeed(v, speedRange))}
      >
        <output htmlFor="speed" className="speed-value" data-testid="speed-value">
          {formatSpeed(speed)}
        </output>
        <button type="button" className="secondary" onClick={() => onSpeed(speedRange.default)}>
          {t("tts.resetSpeed")}
        </button>
      </Field>
    </Step>
  );
}
