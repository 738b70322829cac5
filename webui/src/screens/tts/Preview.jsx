import { useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { ApiError, previewTts } from "../../api.js";
import { languageById } from "../../languages.js";
import { listOf } from "../../lib/engines.js";

/**
 * The free preview: the first ~200 characters of the visitor's text in the chosen voice,
 * speed, format and language, played in place; with several engines, which spoke it.
 */
export default function Preview({ text, voice, speed, format, language, locale, disabled }) {
  const { t, i18n } = useTranslation();
  const [state, setState] = useState({ status: "idle" }); // idle | loading | ready | error
  const audio = useRef(null);
  const url = useRef("");
  const request = useRef(null);

  // A change of what would be spoken makes the last preview stale.
  useEffect(() => {
    setState({ status: "idle" });
  }, [text, voice, speed, format, language]);
  useEffect(
    () => () => {
      request.current?.abort();
      if (url.current) URL.revokeObjectURL(url.current);
    },
    [],
  );

  async function play() {
    request.current?.abort();
    const ctl = new AbortController();
    request.current = ctl;
    setState({ status: "loading" });
    try {
      const { blob, engines } = await previewTts({ text, voice, speed, format, locale, ...(language && { language }) }, { signal: ctl.signal });
      if (url.current) URL.revokeObjectURL(url.current);
      url.current = URL.createObjectURL(blob);
      setState({ status: "ready", src: url.current, engines });
    } catch (err) {
      if (err?.name === "AbortError") return;
      setState({ status: "error", code: err instanceof ApiError ? err.code : "network_error" });
    }
  }

  // Plays as soon as the audio element has its source.
  useEffect(() => {
    if (state.status === "ready" && audio.current) {
      audio.current.play?.()?.catch?.(() => {});
    }
  }, [state]);

  return (
    <div className="preview" data-testid="preview">
      <button type="button" className="secondary" onClick={play} disabled={disabled || state.status === "loading"} aria-describedby="preview-note">
        {state.status === "loading" ? t("tts.previewLoading") : t("tts.preview")}
      </button>
      <span id="preview-note" className="hint preview-note">
        {t("tts.previewNote")}
      </span>
      {state.status === "ready" && (
        <audio ref={audio} className="preview-audio" controls src={state.src} data-testid="preview-audio" aria-label={t("tts.previewAudio")} />
      )}
      {state.status === "ready" && state.engines.length > 0 && (
        <p className="hint preview-engines" data-testid="preview-engines">
          {t("tts.previewBy", { engines: listOf(state.engines, languageById(i18n.language).tag) })}
        </p>
      )}
      {state.status === "error" && (
        <p className="warning" role="alert">
          {t(`errors.${state.code}`, { defaultValue: t("errors.network_error") })}
        </p>
      )}
    </div>
  );
}
