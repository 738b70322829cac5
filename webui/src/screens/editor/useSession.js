import { useEffect, useState } from "react";
import { getTranscript, revertTranscript, saveTranscript } from "../../api.js";
import * as C from "../../lib/cues.js";
import { readJSON, remove, writeJSON } from "../../lib/storage.js";

const draftKey = (token) => `edit:${token}`;

/**
 * The editor's session with the server for the link `token`: the transcript loaded (or the
 * draft kept in local storage restored over it), unsaved edits kept there until saved or
 * dropped, save and back-to-original, and what the page says about them. Each change names
 * the version of the text it started from (its ETag); one refused because another tab or
 * device changed the text first (edit_conflict) leaves the visitor's cues as they are, and
 * `conflict` offers loadNewer, which brings the newer version in as one more step of the
 * history, so that undo brings the visitor's back.
 * @param {string} token
 * @param {ReturnType<typeof import("./useHistory.js").useHistory>} history
 * @param {(key: string) => string} t
 */
export function useSession(token, { cues, change, reset }, t) {
  const [data, setData] = useState(/** @type {import("../../api.js").EditableTranscript | null} */ (null));
  const [loadError, setLoadError] = useState("");
  const [base, setBase] = useState(/** @type {import("../../api.js").Cue[]} */ ([]));
  const [etag, setEtag] = useState("");
  const [notice, setNotice] = useState("");
  const [error, setError] = useState("");
  const [saving, setSaving] = useState(false);
  const unsaved = data !== null && !C.sameCues(cues, base);
  const conflict = error === "edit_conflict";

  useEffect(() => {
    const ctl = new AbortController();
    getTranscript(token, { signal: ctl.signal }).then(
      (d) => {
        const saved = d.edited || d.original;
        const draft = readJSON(draftKey(token));
        const restore = Array.isArray(draft?.cues) && !C.sameCues(draft.cues, saved);
        setData(d);
        setBase(saved);
        setEtag(d.etag);
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
      const { edited, etag: next } = await saveTranscript(token, C.forSaving(cues), etag);
      setEtag(next);
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
      setEtag(await revertTranscript(token, etag));
      remove(draftKey(token));
      setBase(data.original);
      reset(data.original);
      setNotice("editor.reverted");
    } catch (err) {
      setError(err.code || "internal");
    }
  };

  const loadNewer = async () => {
    setError("");
    setNotice("");
    try {
      const d = await getTranscript(token);
      const saved = d.edited || d.original;
      setData(d);
      setBase(saved);
      setEtag(d.etag);
      change(() => saved);
      setNotice("editor.newerLoaded");
    } catch (err) {
      setError(err.code || "internal");
    }
  };

  return { data, loadError, notice, error, conflict, saving, unsaved, save, backToOriginal, loadNewer };
}
