import { wholeSeconds } from "./duration.js";

/**
 * Reads the duration of a chosen media file in the browser (spec, "Entities and their fields":
 * whole seconds, rounded up) from an audio element's metadata. Resolves null
 * when the browser cannot tell (unknown codec, no duration in the header):
 * the server measures the file anyway and its answer is the price.
 */
export function readMediaDuration(file, { timeoutMs = 15000 } = {}) {
  return new Promise((resolve) => {
    let url;
    try {
      url = URL.createObjectURL(file);
    } catch {
      resolve(null);
      return;
    }
    const audio = document.createElement("audio");
    let settled = false;
    const done = (seconds) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      audio.removeAttribute("src");
      URL.revokeObjectURL(url);
      resolve(seconds);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    audio.preload = "metadata";
    audio.onloadedmetadata = () => {
      if (audio.duration !== Infinity) return done(wholeSeconds(audio.duration));
      // Streams written without a duration (MediaRecorder webm): seeking far
      // past the end makes the browser scan the file and report the real one.
      audio.ondurationchange = () => {
        if (Number.isFinite(audio.duration)) done(wholeSeconds(audio.duration));
      };
      audio.currentTime = Number.MAX_SAFE_INTEGER;
    };
    audio.onerror = () => done(null);
    audio.src = url;
  });
}
