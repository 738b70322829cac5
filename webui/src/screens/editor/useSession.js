import { useEffect, useState } from "react";
import { getTranscript, revertTranscript, saveTranscript } from "../../api.js";
import * as C from "../../lib/cues.js";
import { readJSON, remove, writeJSON } from "../../lib/storage.js";

const draftKey = (token) => `edit:${token}`;

/**
 * The editor's session with the server for the link `token`: the transcript loaded (or the
 * draft kept in local storage restored over it), unsaved edits kept there until saved or
 * dropped, save and back-to-original, and what the page says about them.
 * @param {string} token
 * @param {ReturnType<typeof import("./useHistory.js").useHistory>} history
 * @param {(key: string) => string} t
 */
export function useSession(token, { cues, change, reset }, t) {
  const [data, setData] = useState(/** @type {import("../../api.js").EditableTranscript | null} */ (null));
  const [loadError, setLoadError] = useState("");
  const [base, setBase] = useState(/** @type {import("../../api.js").Cue[]} */ ([]));
  const [notice, setNotice] = useState("");
  const [error, setError] = useState("");
  const [saving, setSaving] = useState(false);
  const unsaved = data !== null && !C.sameCues(cues, base);

  useEffect(() => {
    const ctl = new AbortController();
    getTranscript(token, { signal: ctl.signal }).then(
      (d) => {
        const saved = d.edited || d.original;
        const draft = readJSON(draftKey(token));
        const restore = Array.isArray(draft?.cues) && !C.sameCues(draft.cues, saved);
        setData(d);
        setBase(saved);
        reset(restore ? draft.cues : saved);
        setNotice(restore ? "editor.restored" : d.edited ? "editor.editedVersion" : "");
      },
      (err) => {
        if (err?.name !== "AbortError") setLoadError(err.code || "internal");
      },
    );
    return () => ctl.abort();
  }, [token, reset]);

  // Unsaved edits survive a reload; written a moment after typing stops.
  useEffect(() => {
    if (!data) return;
    const id = setTimeout(() => (unsaved ? writeJSON(draftKey(token), { cues }) : remove(draftKey(token))), 300);
    return () => clearTimeout(id);
  }, [data, cues, unsaved, token]);

  const save = async () => {
    if (saving) return;
    setSaving(true);
    setError("");
    setNotice("");
    try {
      const { edited } = await saveTranscript(token, C.forSaving(cues));
      setBase(edited);
      change(() => (C.sameCues(edited, cues) ? cues : edited));
      remove(draftKey(token));
      setNotice("editor.saved");
    } catch (err) {
      setError(err.code || "internal");
    } finally {
      setSaving(false);
    }
  };

  const backToOriginal = async () => {
    if (!data || !window.confirm(t("editor.originalConfirm"))) return;
    setError("");
    try {
      await revertTranscript(token);
      remove(draftKey(token));
      setBase(data.original);
      reset(data.original);
      setNotice("editor.reverted");
    } catch (err) {
      setError(err.code || "internal");
    }
  };

  return { data, loadError, notice, error, saving, unsaved, save, backToOriginal };
}
