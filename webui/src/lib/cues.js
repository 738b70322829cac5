// The transcript editor's pure logic (screens/editor): cues are {start, end, text} with
// times in whole milliseconds, and a speaker where the engine told speakers apart, as
// GET /r/{token}/transcript gives them. Every function
// returns new arrays and leaves its arguments alone, so that undo is a list of snapshots.

/** Scripts written without spaces between words: joining their cues adds none. */
const UNSPACED = /[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]/u;

/** Control characters and line/paragraph separators: the server refuses them in a cue. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/gu;

const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);

/** A cue's text with line breaks and other control characters made spaces. */
export function cleanText(text) {
  return text.replace(CONTROL, " ");
}

/** The cues with cue i's text replaced. */
export function editText(cues, i, text) {
  if (!cues[i] || cues[i].text === text) return cues;
  return cues.map((c, j) => (j === i ? { ...c, text } : c));
}

/**
 * Splits cue i at character `at` of its text; the time is shared in proportion to the
 * characters on each side. A cut at either end changes nothing.
 */
export function splitCue(cues, i, at) {
  const c = cues[i];
  if (!c) return cues;
  const left = c.text.slice(0, at).trimEnd();
  const right = c.text.slice(at).trimStart();
  if (!left.trim() || !right.trim()) return cues;
  const mid = Math.round(c.start + ((c.end - c.start) * left.length) / (left.length + right.length));
  return [...cues.slice(0, i), { ...c, end: mid, text: left }, { ...c, start: mid, text: right }, ...cues.slice(i + 1)];
}

/** Merges cue i with the next one: its text follows, with a space unless the script uses none. */
export function mergeNext(cues, i) {
  const a = cues[i];
  const b = cues[i + 1];
  if (!a || !b) return cues;
  const glue = UNSPACED.test(a.text.slice(-1)) && UNSPACED.test(b.text.slice(0, 1)) ? "" : " ";
  const text = a.text.trimEnd() + glue + b.text.trimStart();
  return [...cues.slice(0, i), { ...a, end: Math.max(a.end, b.end), text }, ...cues.slice(i + 2)];
}

/**
 * Shifts cue i by `ms` (negative: earlier), keeping its length where it can: its start stays
 * between its neighbours' starts and its end within [start, limit].
 */
export function shiftCue(cues, i, ms, limit) {
  const c = cues[i];
  if (!c || !ms) return cues;
  const lo = i > 0 ? cues[i - 1].start : 0;
  const hi = Math.min(i + 1 < cues.length ? cues[i + 1].start : limit, limit);
  const start = clamp(c.start + ms, lo, hi);
  const end = clamp(start + (c.end - c.start), start, limit);
  return cues.map((x, j) => (j === i ? { ...x, start, end } : x));
}

/**
 * Shifts every cue by `ms`, as far as the recording allows: never before 0 nor past `limit`,
 * so the whole shifts by less when a cue would leave it.
 */
export function shiftAll(cues, ms, limit) {
  if (!cues.length || !ms) return cues;
  const first = Math.min(...cues.map((c) => c.start));
  const last = Math.max(...cues.map((c) => c.end));
  const d = clamp(ms, -first, Math.max(0, limit - last));
  if (!d) return cues;
  return cues.map((c) => ({ ...c, start: c.start + d, end: c.end + d }));
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Replaces every occurrence of `find` in every cue (case-insensitively unless
 * `matchCase`), returning the new cues and how many were replaced.
 * @returns {{cues: Array<{start: number, end: number, text: string}>, count: number}}
 */
export function replaceAll(cues, find, replacement, { matchCase = false } = {}) {
  if (!find) return { cues, count: 0 };
  const re = new RegExp(escapeRegExp(find), matchCase ? "gu" : "giu");
  let count = 0;
  const out = cues.map((c) => {
    const text = c.text.replace(re, () => {
      count++;
      return replacement;
    });
    return text === c.text ? c : { ...c, text };
  });
  return { cues: count ? out : cues, count };
}

/** The index of the cue playing at `ms` (the last one started and not ended), or -1. */
export function cueAt(cues, ms) {
  let lo = 0;
  let hi = cues.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cues[mid].start <= ms) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && ms < cues[found].end ? found : -1;
}

/** The cues as the server takes them: texts cleaned and trimmed, blank cues left out, speakers kept. */
export function forSaving(cues) {
  return cues
    .map((c) => ({ start: c.start, end: c.end, text: cleanText(c.text).trim(), ...(c.speaker ? { speaker: c.speaker } : {}) }))
    .filter((c) => c.text);
}

/** Whether two lists of cues are the same. */
export function sameCues(a, b) {
  return (
    a === b ||
    (a.length === b.length &&
      a.every((c, i) => c.start === b[i].start && c.end === b[i].end && c.text === b[i].text && (c.speaker || "") === (b[i].speaker || "")))
  );
}

/** The speakers the cues name, each once, in order of first appearance. */
export function speakersOf(cues) {
  return [...new Set(cues.map((c) => c.speaker).filter(Boolean))];
}

/**
 * Renames speaker `from` to `to` in every cue ("A" → "Dr. Ortega"); a name that is blank
 * once cleaned changes nothing. Two speakers given one name become one.
 */
export function renameSpeaker(cues, from, to) {
  const name = cleanText(to).trim();
  if (!name || name === from || !cues.some((c) => c.speaker === from)) return cues;
  return cues.map((c) => (c.speaker === from ? { ...c, speaker: name } : c));
}

/** A time as [h:]mm:ss.t for the cue list. */
export function formatTime(ms) {
  const t = Math.max(0, Math.round(ms / 100));
  const tenths = t % 10;
  const s = Math.floor(t / 10) % 60;
  const m = Math.floor(t / 600) % 60;
  const h = Math.floor(t / 36000);
  const mm = h ? String(m).padStart(2, "0") : String(m);
  return `${h ? `${h}:` : ""}${mm}:${String(s).padStart(2, "0")}.${tenths}`;
}

/** How many snapshots undo keeps. */
export const HISTORY_LIMIT = 200;

/**
 * An undo history: the present cues, the snapshots before and after it, and the tag of the
 * last change (typing in one cue is one step, not one per key).
 * @typedef {{past: any[], present: any[], future: any[], tag?: string}} History
 */

/** @returns {History} */
export function history(cues) {
  return { past: [], present: cues, future: [] };
}

/**
 * Records `next` as the present. A change with the same tag as the previous one replaces it
 * instead of adding a step.
 * @param {History} h
 * @returns {History}
 */
export function record(h, next, tag) {
  if (next === h.present) return h;
  if (tag && tag === h.tag) return { ...h, present: next, future: [] };
  return { past: [...h.past, h.present].slice(-HISTORY_LIMIT), present: next, future: [], tag };
}

/** @param {History} h @returns {History} */
export function undo(h) {
  if (!h.past.length) return h;
  return { past: h.past.slice(0, -1), present: h.past[h.past.length - 1], future: [h.present, ...h.future] };
}

/** @param {History} h @returns {History} */
export function redo(h) {
  if (!h.future.length) return h;
  return { past: [...h.past, h.present], present: h.future[0], future: h.future.slice(1) };
}
