import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import Loader from "../../Loader.jsx";
import * as C from "../../lib/cues.js";
import ErrorNote from "../order/ErrorNote.jsx";
import Row from "./Row.jsx";
import Speakers from "./Speakers.jsx";
import { useHistory } from "./useHistory.js";
import { usePlayback } from "./usePlayback.js";
import { useSession } from "./useSession.js";
import "./editor.css";

// The transcript editor of a delivered link (/r/{token}/edit, api/editor.go): the cues with
// their times, played along with the visitor's own recording (an object URL: never
// uploaded) or a direct video link, edited, and saved beside the result. Unsaved edits are
// kept in local storage under the link's token until they are saved or dropped. The page's
// state lives in three hooks: its session with the server (useSession.js), the playback
// (usePlayback.js) and the history of edits (useHistory.js).

const STEP_MS = 500;
/** Cues rendered first: more than a screenful, so the first cues are editable as soon as
 * the transcript arrives. */
const FIRST = 40;
/** Cues rendered per frame after them: a 3-hour transcript (~2,500 cues) is whole within a
 * few frames. */
const BATCH = 300;

/** Focuses cue i's text, its cursor at `at` (the start by default). */
function focusCue(i, at = 0) {
  const el = /** @type {HTMLTextAreaElement | null} */ (document.getElementById(`cue-text-${i}`));
  if (!el) return;
  el.focus();
  el.setSelectionRange(at, at);
}

export default function Editor({ token }) {
  const { t, i18n } = useTranslation();
  const history = useHistory();
  const { hist, cues, cuesRef, change, undo, redo } = history;
  const { data, loadError, notice, error, conflict, saving, unsaved, save, backToOriginal, loadNewer } = useSession(token, history, t);
  const { video, src, link, setLink, current, seekTo, onSeek, pickFile, playLink } = usePlayback(cuesRef, data);
  const [shiftSec, setShiftSec] = useState("0.5");
  const [find, setFind] = useState("");
  const [replacement, setReplacement] = useState("");
  const [matchCase, setMatchCase] = useState(false);
  const [replaced, setReplaced] = useState(/** @type {number | null} */ (null));
  const [shown, setShown] = useState(FIRST);
  const cursor = useRef({ i: 0, at: 0 });
  const limit = data?.duration ?? 0;
  const speakers = useMemo(() => C.speakersOf(cues), [cues]);

  useEffect(() => {
    if (shown >= cues.length) return;
    const id = setTimeout(() => setShown((n) => n + BATCH));
    return () => clearTimeout(id);
  }, [shown, cues.length]);

  const onText = useCallback((i, text) => change((cs) => C.editText(cs, i, text), `text:${i}`), [change]);
  const onRename = useCallback((from, to) => change((cs) => C.renameSpeaker(cs, from, to)), [change]);
  const onFocus = useCallback((i) => {
    cursor.current = { i, at: cursor.current.i === i ? cursor.current.at : 0 };
  }, []);
  const onCursor = useCallback((i, at) => {
    cursor.current = { i, at };
  }, []);
  const split = () => {
    const { i, at } = cursor.current;
    change((cs) => C.splitCue(cs, i, at));
    setTimeout(() => focusCue(i + 1));
  };
  const merge = () => {
    const { i } = cursor.current;
    const at = cues[i]?.text.length ?? 0;
    change((cs) => C.mergeNext(cs, i));
    setTimeout(() => focusCue(i, at));
  };
  const shiftMs = () => Math.round(Number(shiftSec.replace(",", ".")) * 1000) || 0;
  const shiftOne = () => change((cs) => C.shiftCue(cs, cursor.current.i, shiftMs(), limit));
  const shiftEvery = () => change((cs) => C.shiftAll(cs, shiftMs(), limit));
  const replaceEverywhere = () => {
    const r = C.replaceAll(cues, find, replacement, { matchCase });
    setReplaced(r.count);
    change(() => r.cues);
  };

  const onKeyDown = (e) => {
    const v = video.current;
    const mod = e.ctrlKey || e.metaKey;
    let done = true;
    if (e.altKey && !mod) {
      const i = Math.max(current, cursor.current.i);
      switch (e.code) {
        case "KeyK":
          if (v?.src) v.paused ? v.play().catch(() => {}) : v.pause();
          break;
        case "KeyJ":
        case "KeyL":
          if (v?.src) seekTo(v.currentTime * 1000 + (e.code === "KeyJ" ? -STEP_MS : STEP_MS));
          break;
        case "ArrowUp":
        case "ArrowDown": {
          const to = Math.min(Math.max(i + (e.code === "ArrowUp" ? -1 : 1), 0), cues.length - 1);
          seekTo(cues[to]?.start ?? 0);
          focusCue(to);
          break;
        }
        default:
          done = false;
      }
    } else if (mod && !e.altKey && (e.code === "KeyZ" || e.code === "KeyY")) {
      e.code === "KeyY" || e.shiftKey ? redo() : undo();
    } else if (mod && !e.altKey && e.code === "KeyS") {
      save();
    } else done = false;
    if (done) e.preventDefault();
  };

  if (loadError) {
    return (
      <section className="card">
        <h1>{t("editor.title")}</h1>
        <ErrorNote code={loadError} />
      </section>
    );
  }
  if (!data) return <Loader label={t("editor.loading")} />;

  return (
    <section className="editor" onKeyDown={onKeyDown} data-testid="editor">
      <div className="editor-side">
        <h1>{t("editor.title")}</h1>
        <p className="lead">{t("editor.intro")}</p>
        <p>
          <a href={`/r/${encodeURIComponent(token)}?lang=${i18n.language}`}>{t("editor.backToLink")}</a>
        </p>
        <fieldset className="editor-media">
          <legend>{t("editor.media")}</legend>
          <label className="editor-field">
            <span>{t("editor.pickFile")}</span>
            <input type="file" accept="audio/*,video/*" onChange={pickFile} data-testid="editor-file" />
          </label>
          <form className="editor-row" onSubmit={playLink}>
            <label className="editor-field">
              <span>{t("editor.link")}</span>
              <input type="url" dir="ltr" value={link} onChange={(e) => setLink(e.target.value)} />
            </label>
            <button type="submit">{t("editor.useLink")}</button>
          </form>
          <video ref={video} src={src || undefined} controls playsInline className="editor-player" data-testid="editor-player" />
        </fieldset>
        <p className="small">{t("editor.keys")}</p>
        <div className="editor-tools" role="group" aria-label={t("editor.tools")}>
          <button type="button" onClick={split} data-testid="editor-split">
            {t("editor.split")}
          </button>
          <button type="button" onClick={merge} data-testid="editor-merge">
            {t("editor.merge")}
          </button>
          <label className="editor-field">
            <span>{t("editor.shiftBy")}</span>
            <input type="text" inputMode="decimal" dir="ltr" size={6} value={shiftSec} onChange={(e) => setShiftSec(e.target.value)} />
          </label>
          <button type="button" onClick={shiftOne}>
            {t("editor.shiftOne")}
          </button>
          <button type="button" onClick={shiftEvery}>
            {t("editor.shiftAll")}
          </button>
          <button type="button" onClick={undo} disabled={!hist.past.length}>
            {t("editor.undo")}
          </button>
          <button type="button" onClick={redo} disabled={!hist.future.length}>
            {t("editor.redo")}
          </button>
        </div>
        <form
          className="editor-tools"
          onSubmit={(e) => {
            e.preventDefault();
            replaceEverywhere();
          }}
        >
          <label className="editor-field">
            <span>{t("editor.find")}</span>
            <input type="text" dir="auto" value={find} onChange={(e) => setFind(e.target.value)} data-testid="editor-find" />
          </label>
          <label className="editor-field">
            <span>{t("editor.replaceWith")}</span>
            <input type="text" dir="auto" value={replacement} onChange={(e) => setReplacement(e.target.value)} data-testid="editor-replace" />
          </label>
          <label>
            <input type="checkbox" checked={matchCase} onChange={(e) => setMatchCase(e.target.checked)} /> {t("editor.matchCase")}
          </label>
          <button type="submit" data-testid="editor-replace-all">
            {t("editor.replaceAll")}
          </button>
          {replaced !== null && <span role="status">{t("editor.replaced", { count: replaced })}</span>}
        </form>
        <Speakers names={speakers} onRename={onRename} t={t} />
        <div className="editor-tools">
          <button type="button" className="primary" onClick={save} disabled={saving} data-testid="editor-save">
            {saving ? t("editor.saving") : t("editor.save")}
          </button>
          <button type="button" onClick={backToOriginal} data-testid="editor-original">
            {t("editor.original")}
          </button>
        </div>
        <p role="status" data-testid="editor-status">
          {[notice && !(notice === "editor.saved" && unsaved) && t(notice), unsaved && t("editor.unsaved")].filter(Boolean).join(" ")}
        </p>
        <ErrorNote code={error} />
        {conflict && (
          <button type="button" onClick={loadNewer} data-testid="editor-load-newer">
            {t("editor.loadNewer")}
          </button>
        )}
      </div>
      <ol className="editor-cues" aria-label={t("editor.cues")}>
        {cues.slice(0, shown).map((c, i) => (
          <Row key={i} cue={c} i={i} current={i === current} onText={onText} onFocus={onFocus} onCursor={onCursor} onSeek={onSeek} t={t} />
        ))}
      </ol>
    </section>
  );
}
