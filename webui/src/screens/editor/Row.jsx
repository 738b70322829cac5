import { memo } from "react";
import * as C from "../../lib/cues.js";

/** A cue's row; memoized, so that playing re-renders only the rows whose highlight changes. */
const Row = memo(function Row({ cue, i, current, onText, onFocus, onCursor, onSeek, t }) {
  const time = C.formatTime(cue.start);
  return (
    <li id={`cue-${i}`} className={current ? "cue current" : "cue"} aria-current={current ? "true" : undefined}>
      <div className="cue-head">
        <button type="button" className="cue-time" onClick={() => onSeek(i)} aria-label={t("editor.seek", { time })}>
          <bdi dir="ltr">
            {time} – {C.formatTime(cue.end)}
          </bdi>
        </button>
        {cue.speaker && (
          <bdi className="cue-speaker" data-testid="cue-speaker">
            {cue.speaker}
          </bdi>
        )}
      </div>
      <textarea
        id={`cue-text-${i}`}
        dir="auto"
        rows={2}
        value={cue.text}
        aria-label={cue.speaker ? t("editor.cueBy", { n: i + 1, time, name: cue.speaker }) : t("editor.cue", { n: i + 1, time })}
        onChange={(e) => onText(i, e.target.value)}
        onFocus={() => onFocus(i)}
        onSelect={(e) => onCursor(i, e.currentTarget.selectionStart)}
      />
    </li>
  );
});

export default Row;
