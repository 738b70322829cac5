import { useTranslation } from "react-i18next";
import { MODELS, NEWER_VOICES, SPEECH_FORMATS, TRANSCRIPT_FORMATS, VOICES } from "../../lib/apiDocs.js";

/**
 * The errors a call can answer (api/v1/errors.go), in OpenAI's shape, with the retry hint
 * OpenAI's SDKs read: [status, code, meaning's key, hint]. `stt` rows are transcription's
 * alone. model_not_found is 400 on a call, 404 from GET /v1/models/{id}.
 */
const ERRORS = [
  [400, "invalid_request_error", "invalid", ""],
  [401, "invalid_api_key", "invalidKey", "x-should-retry: false"],
  ["400, 404", "model_not_found", "model", "x-should-retry: false"],
  [400, "idempotency_key_reused", "reused", ""],
  [409, "idempotency_in_progress", "inProgress", "Retry-After: 1"],
  [409, "idempotency_key_spent", "spent", "x-should-retry: false"],
  [413, "file_too_large", "tooLarge", "", "stt"],
  [400, "audio_too_long", "tooLong", "", "stt"],
  [429, "insufficient_quota", "quota", "x-should-retry: false"],
  [429, "rate_limit_exceeded", "rate", ""],
  [500, "engine_error", "engine", ""],
  [503, "service_unavailable", "closed", "Retry-After: 30"],
  [503, "busy", "busy", "Retry-After: 5", "stt"],
];

/** OpenAI's error body, as every error comes. */
const ERROR_SHAPE = '{"error": {"message": "…", "type": "…", "param": "…", "code": "…"}}';

/** The headers a call sends or answers. */
const HEADERS = ["Idempotency-Key", "Parla-Charged-Cents", "Retry-After", "x-should-retry"];

const codes = (list) => (
  <code dir="ltr">{list.join(", ")}</code>
);

/** The reference: models, voices, formats, limits, errors and headers, as /v1 takes them. */
export default function Reference({ sttOpen, maxUploadBytes }) {
  const { t } = useTranslation();
  const newer = Object.entries(NEWER_VOICES).map(([from, to]) => `${from} → ${to}`);
  return (
    <section className="card reference" aria-labelledby="reference-title">
      <h2 id="reference-title">{t("api.refTitle")}</h2>
      <h3>{t("api.refModels")}</h3>
      <dl>
        <dt>POST /v1/audio/speech</dt>
        <dd>{codes(MODELS.tts)}</dd>
        {sttOpen && (
          <>
            <dt>POST /v1/audio/transcriptions</dt>
            <dd>{codes(MODELS.sst)}</dd>
          </>
        )}
      </dl>
      <p>{t("api.refSnapshots")}</p>
      <h3>{t("api.refVoices")}</h3>
      <p>
        {codes(VOICES)}. {t("api.refNewerVoices")} {codes(newer)}.
      </p>
      <h3>{t("api.refFormats")}</h3>
      <dl>
        <dt>{t("api.sample.speech")}</dt>
        <dd>{codes(SPEECH_FORMATS)}</dd>
        {sttOpen && (
          <>
            <dt>{t("api.sample.transcription")}</dt>
            <dd>{codes(TRANSCRIPT_FORMATS)}</dd>
          </>
        )}
      </dl>
      <h3>{t("api.refLimits")}</h3>
      <ul className="guide">
        <li>{t("api.refLimitSpeech")}</li>
        {sttOpen && maxUploadBytes > 0 && <li>{t("api.refLimitFile", { mb: Math.floor(maxUploadBytes / (1 << 20)) })}</li>}
        <li>{t("api.refLimitRate")}</li>
      </ul>
      <h3>{t("api.refErrors")}</h3>
      <p>{t("api.refErrorShape")}</p>
      <pre className="code" dir="ltr">{ERROR_SHAPE}</pre>
      <table className="errors">
          <tbody>
            {ERRORS.filter((e) => sttOpen || e[4] !== "stt").map(([status, code, key, hint]) => (
              <tr key={code}>
                <td dir="ltr">
                  {status} <code>{code}</code>
                </td>
                <td>
                  {t(`api.err.${key}`)} {hint && <code dir="ltr">{hint}</code>}
                </td>
              </tr>
            ))}
          </tbody>
      </table>
      <h3>{t("api.refHeaders")}</h3>
      <dl>
        {HEADERS.map((h) => (
          <div key={h}>
            <dt>
              <code dir="ltr">{h}</code>
            </dt>
            <dd>{t(`api.header.${h}`)}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
