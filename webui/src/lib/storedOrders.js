// The transcription orders kept in the browser between the steps (spec:
// "Entities and their fields"): 'sst' {email, fileName, filePath, outputFormat, language} and
// 'vtt' {email, selectedFile, outputFormat, language}, both with translate
// (an English translation wanted). Both also keep the server's quote
// (duration, speechSeconds, amount; vtt: title) so that a visitor coming back
// from the checkout sees the same price; the server checks it again anyway.
// Anything stored is untrusted: restoring keeps only values the config allows.

const text = (v) => (typeof v === "string" ? v : "");
const count = (v) => (Number.isInteger(v) && v > 0 ? v : 0);
const object = (v) => (v && typeof v === "object" ? v : {});
// Seconds of speech: 0 is a measure too; anything else is "not measured".
const speech = (v) => (Number.isInteger(v) && v >= 0 ? v : null);

function choices(saved, service) {
  return {
    email: text(saved.email),
    outputFormat: service?.formats?.includes(saved.outputFormat) ? saved.outputFormat : "",
    language: service?.languages?.includes(saved.language) ? saved.language : "",
    translate: saved.translate === true,
  };
}

/** The audio order saved in storage, checked against config.sst; `upload` is null until a file was uploaded. */
export function restoreSttOrder(saved, sst) {
  const s = object(saved);
  const upload =
    text(s.filePath) && count(s.amount)
      ? { fileName: text(s.fileName), filePath: s.filePath, duration: count(s.duration), speechSeconds: speech(s.speechSeconds), amount: s.amount }
      : null;
  return { ...choices(s, sst), upload };
}

/** What is stored under 'sst' for the page state. */
export function sttRecord({ email, outputFormat, language, translate, upload }) {
  return {
    email,
    fileName: upload?.fileName || "",
    filePath: upload?.filePath || "",
    outputFormat,
    language,
    translate: translate === true,
    duration: upload?.duration || 0,
    speechSeconds: upload?.speechSeconds ?? null,
    amount: upload?.amount || 0,
  };
}

/** The video order saved in storage, checked against config.vtt; `analysis` is null until a link was analysed. */
export function restoreVttOrder(saved, vtt) {
  const s = object(saved);
  const link = text(s.selectedFile);
  const analysis = link && count(s.amount) ? { link, duration: count(s.duration), speechSeconds: speech(s.speechSeconds), amount: s.amount, title: text(s.title) } : null;
  return { ...choices(s, vtt), link, analysis };
}

/** What is stored under 'vtt' for the page state: the link typed, and the quote when it belongs to that link. */
export function vttRecord({ email, outputFormat, language, translate, link, analysis }) {
  const quoted = analysis && analysis.link === link ? analysis : null;
  return {
    email,
    selectedFile: link,
    outputFormat,
    language,
    translate: translate === true,
    duration: quoted?.duration || 0,
    speechSeconds: quoted?.speechSeconds ?? null,
    amount: quoted?.amount || 0,
    title: quoted?.title || "",
  };
}
