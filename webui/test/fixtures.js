/** A GET /api/config answer as the API contract describes it. */
export const CONFIG = {
  version: "v3.3.2",
  currency: "eur",
  linkDays: 10,
  payment: { mode: "test", publishableKey: "" },
  services: {
    tts: { open: true },
    sst: { open: false, reason: "engine_unavailable" },
    vtt: { open: false, reason: "engine_unavailable" },
  },
  tts: {
    voices: ["alloy", "echo", "fable", "onyx", "nova", "shimmer"],
    defaultVoice: "alloy",
    formats: ["mp3", "opus", "aac", "flac"],
    defaultFormat: "mp3",
    speed: { min: 0.25, max: 4, step: 0.01, default: 1 },
    maxChars: 100000,
    price: { unitChars: 1000, unitAmount: 99 },
  },
};

/** A fetch Response carrying JSON. */
export function json(status, body) {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}
