import { describe, expect, it } from "vitest";
import {
  cleanText,
  cueAt,
  editText,
  forSaving,
  formatTime,
  history,
  HISTORY_LIMIT,
  mergeNext,
  record,
  redo,
  renameSpeaker,
  replaceAll,
  sameCues,
  shiftAll,
  shiftCue,
  speakersOf,
  splitCue,
  undo,
} from "../src/lib/cues.js";

const cues = () => [
  { start: 0, end: 2000, text: "Hello Ortiga, welcome." },
  { start: 2000, end: 4000, text: "ortiga said hi." },
  { start: 5000, end: 6000, text: "Bye." },
];

describe("editing cues", () => {
  it("edits one cue's text and leaves the input alone", () => {
    const before = cues();
    const after = editText(before, 1, "Changed.");
    expect(after[1].text).toBe("Changed.");
    expect(before[1].text).toBe("ortiga said hi.");
    expect(editText(before, 1, before[1].text)).toBe(before);
  });

  it("splits at the cursor, sharing the time by characters", () => {
    const after = splitCue(cues(), 0, 13);
    expect(after).toHaveLength(4);
    expect(after[0]).toEqual({ start: 0, end: 1238, text: "Hello Ortiga," });
    expect(after[1]).toEqual({ start: 1238, end: 2000, text: "welcome." });
    expect(splitCue(cues(), 0, 0)).toHaveLength(3);
    expect(splitCue(cues(), 0, 22)).toHaveLength(3);
  });

  it("merges with the next, with a space unless the script has none", () => {
    const after = mergeNext(cues(), 1);
    expect(after).toHaveLength(2);
    expect(after[1]).toEqual({ start: 2000, end: 6000, text: "ortiga said hi. Bye." });
    expect(mergeNext(cues(), 2)).toHaveLength(3);
    const jp = [
      { start: 0, end: 1, text: "こんにちは。" },
      { start: 1, end: 2, text: "元気です。" },
    ];
    expect(mergeNext(jp, 0)[0].text).toBe("こんにちは。元気です。");
    const split = splitCue(cues(), 0, 13);
    expect(mergeNext(split, 0)[0]).toEqual(cues()[0]);
  });

  it("shifts one cue between its neighbours, and all cues within the recording", () => {
    expect(shiftCue(cues(), 1, 500, 6000)[1]).toEqual({ start: 2500, end: 4500, text: "ortiga said hi." });
    expect(shiftCue(cues(), 1, -5000, 6000)[1]).toMatchObject({ start: 0, end: 2000 });
    expect(shiftCue(cues(), 2, 5000, 6000)[2]).toMatchObject({ start: 6000, end: 6000 });
    const atZero = cues();
    expect(shiftAll(atZero, -500, 6000)).toBe(atZero);
    expect(shiftAll(cues(), 500, 7000).map((c) => c.start)).toEqual([500, 2500, 5500]);
    expect(shiftAll(cues(), 5000, 7000).map((c) => c.end)).toEqual([3000, 5000, 7000]);
    expect(shiftAll(cues(), 5000, 6000)).toEqual(cues());
  });

  it("replaces a name everywhere, whatever its case, counting", () => {
    const { cues: after, count } = replaceAll(cues(), "ortiga", "Ortega");
    expect(count).toBe(2);
    expect(after.map((c) => c.text)).toEqual(["Hello Ortega, welcome.", "Ortega said hi.", "Bye."]);
    expect(replaceAll(cues(), "ortiga", "Ortega", { matchCase: true }).count).toBe(1);
    expect(replaceAll(cues(), "a.", "x").count).toBe(0);
    expect(replaceAll(cues(), "", "x").count).toBe(0);
    expect(replaceAll(cues(), "$&", "x").count).toBe(0);
  });

  it("finds the cue playing at a time", () => {
    expect([0, 1999, 2000, 4500, 5000, 6000, -1].map((t) => cueAt(cues(), t))).toEqual([0, 0, 1, -1, 2, -1, -1]);
    expect(cueAt([], 0)).toBe(-1);
  });

  it("saves clean texts and drops blank cues", () => {
    expect(cleanText("a\nb\u2028c\u0000")).toBe("a b c ");
    const saved = forSaving([...cues(), { start: 6000, end: 6000, text: " \n " }, { start: 6000, end: 6000, text: " x\n" }]);
    expect(saved).toHaveLength(4);
    expect(saved[3].text).toBe("x");
    expect(sameCues(forSaving(cues()), cues())).toBe(true);
    expect(sameCues(cues(), splitCue(cues(), 0, 5))).toBe(false);
  });

  it("renames a speaker in every cue at once, keeping speakers through saving, split and merge", () => {
    const spoken = cues().map((c, i) => ({ ...c, speaker: i === 1 ? "B" : "A" }));
    expect(speakersOf(spoken)).toEqual(["A", "B"]);
    expect(speakersOf(cues())).toEqual([]);
    const renamed = renameSpeaker(spoken, "A", " Dr.\nOrtega ");
    expect(renamed.map((c) => c.speaker)).toEqual(["Dr. Ortega", "B", "Dr. Ortega"]);
    expect(spoken[0].speaker).toBe("A");
    expect(renameSpeaker(spoken, "A", "  ")).toBe(spoken);
    expect(renameSpeaker(spoken, "C", "Someone")).toBe(spoken);
    expect(speakersOf(renameSpeaker(renamed, "B", "Dr. Ortega"))).toEqual(["Dr. Ortega"]);
    expect(forSaving(renamed).map((c) => c.speaker)).toEqual(["Dr. Ortega", "B", "Dr. Ortega"]);
    expect(forSaving(cues())[0]).not.toHaveProperty("speaker");
    expect(sameCues(spoken, renamed)).toBe(false);
    expect(splitCue(spoken, 0, 5).map((c) => c.speaker)).toEqual(["A", "A", "B", "A"]);
    expect(mergeNext(spoken, 0)[0].speaker).toBe("A");
  });

  it("writes times", () => {
    expect(formatTime(0)).toBe("0:00.0");
    expect(formatTime(62_340)).toBe("1:02.3");
    expect(formatTime(3 * 3600_000 + 5_000)).toBe("3:00:05.0");
  });
});

describe("undo and redo", () => {
  it("steps back and forth, typing in one cue being one step", () => {
    let h = history(cues());
    h = record(h, editText(h.present, 0, "A"), "text:0");
    h = record(h, editText(h.present, 0, "AB"), "text:0");
    h = record(h, mergeNext(h.present, 0));
    expect(h.present).toHaveLength(2);
    h = undo(h);
    expect(h.present[0].text).toBe("AB");
    h = undo(h);
    expect(h.present).toEqual(cues());
    expect(undo(h)).toBe(h);
    h = redo(redo(h));
    expect(h.present).toHaveLength(2);
    expect(redo(h)).toBe(h);
    h = undo(h);
    h = record(h, splitCue(h.present, 1, 3));
    expect(h.future).toEqual([]);
  });

  it("keeps a bounded history", () => {
    let h = history(cues());
    for (let i = 0; i < HISTORY_LIMIT + 50; i++) h = record(h, editText(h.present, 0, `v${i}`));
    expect(h.past).toHaveLength(HISTORY_LIMIT);
  });
});
