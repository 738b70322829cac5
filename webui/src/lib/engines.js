// Display names of the speech-to-text engines the server reports (config sst.engine / vtt.engine).
const ENGINE_NAMES = { whisper: "whisper.cpp", openai: "OpenAI" };

/** The name shown on the provider line; an unknown engine id is shown as it is. */
export function engineName(id) {
  return ENGINE_NAMES[id] || String(id || "");
}
