import { useState } from "react";

/**
 * The speakers the engine told apart, each renamed at once in every cue ("A" → "Dr. Ortega");
 * nothing without speakers (whisper gives none).
 */
export default function Speakers({ names, onRename, t }) {
  const [drafts, setDrafts] = useState(/** @type {Record<string, string>} */ ({}));
  if (!names.length) return null;
  const draft = (name) => drafts[name] ?? "";
  const setDraft = (name, value) => setDrafts((d) => ({ ...d, [name]: value }));
  return (
    <fieldset className="editor-media" data-testid="editor-speakers">
      <legend>{t("editor.speakers")}</legend>
      {names.map((name) => (
        <form
          key={name}
          className="editor-row"
          onSubmit={(e) => {
            e.preventDefault();
            onRename(name, draft(name));
            setDraft(name, "");
          }}
        >
          <label className="editor-field">
            <span>{t("editor.renameSpeaker", { name })}</span>
            <input type="text" dir="auto" value={draft(name)} onChange={(e) => setDraft(name, e.target.value)} />
          </label>
          <button type="submit">{t("editor.rename")}</button>
        </form>
      ))}
    </fieldset>
  );
}
