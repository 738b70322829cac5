import { describe, expect, it } from "vitest";
import { restoreSttOrder, restoreVttOrder, sttRecord, vttRecord } from "../src/lib/storedOrders.js";
import { readJSON, writeJSON } from "../src/lib/storage.js";
import { CONFIG } from "./fixtures.js";

describe("the audio order in storage ('sst')", () => {
  const upload = { fileName: "talk.mp3", filePath: "up_123", duration: 65, speechSeconds: 50, amount: 99 };

  it("stores the spec's fields plus the quote, and restores them", () => {
    const record = sttRecord({ email: "a@example.com", outputFormat: "srt", language: "fr", translate: true, upload });
    expect(record).toEqual({ email: "a@example.com", fileName: "talk.mp3", filePath: "up_123", outputFormat: "srt", language: "fr", translate: true, duration: 65, speechSeconds: 50, amount: 99 });
    writeJSON("sst", record);
    expect(restoreSttOrder(readJSON("sst"), CONFIG.sst)).toEqual({ email: "a@example.com", outputFormat: "srt", language: "fr", translate: true, upload });
  });

  it("stores empty values before any upload", () => {
    expect(sttRecord({ email: "", outputFormat: "", language: "", upload: null })).toEqual({
      email: "", fileName: "", filePath: "", outputFormat: "", language: "", translate: false, duration: 0, speechSeconds: null, amount: 0,
    });
  });

  it("keeps only what the config allows from untrusted storage", () => {
    const saved = { email: 5, fileName: "x", filePath: "up_1", outputFormat: "docx", language: "xx", translate: "yes", amount: -1 };
    expect(restoreSttOrder(saved, CONFIG.sst)).toEqual({ email: "", outputFormat: "", language: "", translate: false, upload: null });
    expect(restoreSttOrder(null, CONFIG.sst)).toEqual({ email: "", outputFormat: "", language: "", translate: false, upload: null });
    // A speech measure that is not a whole number of seconds is no measure.
    expect(restoreSttOrder({ filePath: "up_1", amount: 99, duration: 60, speechSeconds: "lots" }, CONFIG.sst).upload.speechSeconds).toBeNull();
    expect(restoreSttOrder("garbage", CONFIG.sst).upload).toBeNull();
  });
});

describe("the video order in storage ('vtt')", () => {
  const analysis = { link: "https://example.com/v.mp4", duration: 61, speechSeconds: null, amount: 101, title: "Talk" };

  it("stores the link as selectedFile with its quote, and restores them", () => {
    const record = vttRecord({ email: "a@example.com", outputFormat: "vtt", language: "", link: analysis.link, analysis });
    expect(record).toEqual({ email: "a@example.com", selectedFile: analysis.link, outputFormat: "vtt", language: "", translate: false, duration: 61, speechSeconds: null, amount: 101, title: "Talk" });
    expect(restoreVttOrder(record, CONFIG.vtt)).toEqual({ email: "a@example.com", outputFormat: "vtt", language: "", translate: false, link: analysis.link, analysis });
    const measured = { ...analysis, speechSeconds: 0 }; // no speech is a measure too
    expect(restoreVttOrder(vttRecord({ link: analysis.link, analysis: measured, translate: true }), CONFIG.vtt)).toMatchObject({ translate: true, analysis: measured });
  });

  it("drops the quote when the link was edited after the analysis", () => {
    const record = vttRecord({ email: "", outputFormat: "", language: "", link: "https://example.com/other.mp4", analysis });
    expect(record.amount).toBe(0);
    expect(restoreVttOrder(record, CONFIG.vtt)).toMatchObject({ link: "https://example.com/other.mp4", analysis: null });
  });
});
