import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";

/**
 * A voice's sample behind one play/pause button: one tab stop per voice, labelled in the
 * interface language (the browser's own controls cost three and speak its language).
 * Playing one sample pauses any other.
 */
export default function SamplePlayer({ src, voice, onPlay }) {
  const { t } = useTranslation();
  const audio = useRef(null);
  const [playing, setPlaying] = useState(false);

  useEffect(() => {
    const a = audio.current;
    if (!a) return undefined;
    const stop = () => setPlaying(false);
    a.addEventListener("pause", stop);
    a.addEventListener("ended", stop);
    return () => {
      a.removeEventListener("pause", stop);
      a.removeEventListener("ended", stop);
    };
  }, []);

  function toggle() {
    const a = audio.current;
    if (!a) return;
    if (!a.paused) {
      a.pause();
      return;
    }
    for (const other of document.querySelectorAll("audio.voice-sample")) if (other !== a) other.pause();
    a.play?.()?.catch?.(() => setPlaying(false));
  }

  return (
    <>
      <button
        type="button"
        className="secondary sample-button"
        aria-pressed={playing}
        aria-label={t(playing ? "tts.samplePause" : "tts.samplePlay", { voice })}
        onClick={toggle}
        data-testid="sample-button"
      >
        <span aria-hidden="true" className="sample-icon">
          {playing ? "❚❚" : "▶"}
        </span>{" "}
        {t(playing ? "tts.samplePauseShort" : "tts.samplePlayShort")}
      </button>
      <audio
        ref={audio}
        className="voice-sample"
        preload="none"
        src={src}
        aria-label={t("tts.voiceSample", { voice })}
        onPlay={() => {
          setPlaying(true);
          onPlay?.();
        }}
      />
    </>
  );
}
