import { useCallback, useEffect, useRef, useState } from "react";
import * as C from "../../lib/cues.js";

/**
 * The editor's playback: the visitor's own recording (an object URL: never uploaded) or a
 * direct video link, the cue under the play head highlighted every frame while it plays,
 * and seeking to a time or a cue.
 * @param {{current: import("../../api.js").Cue[]}} cuesRef
 * @param {unknown} data the loaded transcript: the player appears with it
 */
export function usePlayback(cuesRef, data) {
  const [src, setSrc] = useState("");
  const [link, setLink] = useState("");
  const [current, setCurrent] = useState(-1);
  const video = useRef(/** @type {HTMLVideoElement | null} */ (null));

  // The object URL of a chosen file lives as long as it is the source.
  useEffect(() => () => (src.startsWith("blob:") ? URL.revokeObjectURL(src) : undefined), [src]);

  const seekTo = useCallback(
    (ms) => {
      const v = video.current;
      if (v && v.src) v.currentTime = Math.max(0, ms) / 1000;
      setCurrent(C.cueAt(cuesRef.current, ms));
    },
    [cuesRef],
  );
  const onSeek = useCallback((i) => seekTo(cuesRef.current[i]?.start ?? 0), [seekTo, cuesRef]);

  // The highlight follows the recording, every frame while it plays.
  useEffect(() => {
    const v = video.current;
    if (!v) return;
    let frame = 0;
    const follow = () => {
      const i = C.cueAt(cuesRef.current, v.currentTime * 1000);
      setCurrent((prev) => {
        if (i !== prev && i >= 0 && !v.paused && document.activeElement?.tagName !== "TEXTAREA") {
          document.getElementById(`cue-${i}`)?.scrollIntoView({ block: "nearest" });
        }
        return i;
      });
      if (!v.paused) frame = requestAnimationFrame(follow);
    };
    v.addEventListener("play", follow);
    v.addEventListener("seeked", follow);
    return () => {
      cancelAnimationFrame(frame);
      v.removeEventListener("play", follow);
      v.removeEventListener("seeked", follow);
    };
  }, [data, cuesRef]);

  const pickFile = (e) => {
    const f = e.target.files?.[0];
    if (f) setSrc(URL.createObjectURL(f));
  };
  const playLink = (e) => {
    e.preventDefault();
    if (/^https?:\/\//i.test(link.trim())) setSrc(link.trim());
  };

  return { video, src, link, setLink, current, seekTo, onSeek, pickFile, playLink };
}
