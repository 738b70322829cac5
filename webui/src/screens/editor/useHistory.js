import { useCallback, useRef, useState } from "react";
import * as C from "../../lib/cues.js";

/**
 * The editor's history: the cues as they are now (`cues`, and `cuesRef` for callbacks that
 * must not change with them), what came before and after (undo, redo), and `change`, which
 * records an edit (edits of one tag in a row are one step: typing in one cue).
 */
export function useHistory() {
  const [hist, setHist] = useState(() => C.history([]));
  const cues = hist.present;
  const cuesRef = useRef(cues);
  cuesRef.current = cues;
  const change = useCallback((next, tag) => setHist((h) => C.record(h, next(h.present), tag)), []);
  /** Starts the history over from `cs` (a loaded or reverted transcript). */
  const reset = useCallback((cs) => setHist(C.history(cs)), []);
  const undo = () => setHist(C.undo);
  const redo = () => setHist(C.redo);
  return { hist, cues, cuesRef, change, reset, undo, redo };
}
