import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { analyzeVideo, ApiError, uploadAudio, uploadPercent } from "../src/api.js";
import { FakeXHR, json } from "./fixtures.js";

describe("uploadPercent", () => {
  it.each([
    [0, 100, 0],
    [1, 3, 33],
    [999, 1000, 99],
    [1000, 1000, 100],
    [2000, 1000, 100],
    [5, 0, 0],
  ])("%i of %i → %i%%", (loaded, total, p) => expect(uploadPercent(loaded, total)).toBe(p));
});

describe("uploadAudio (XMLHttpRequest, for the progress)", () => {
  beforeEach(() => vi.stubGlobal("XMLHttpRequest", FakeXHR));
  afterEach(() => vi.unstubAllGlobals());
  const file = new File(["x".repeat(10)], "talk.mp3", { type: "audio/mpeg" });

  it("posts the file as multipart field 'file', reports percents and resolves with the answer", async () => {
    const seen = [];
    const p = uploadAudio(file, { onProgress: (n) => seen.push(n) });
    const xhr = FakeXHR.last;
    expect(xhr.method).toBe("POST");
    expect(xhr.url).toBe("/services/sst/uploadaudio");
    expect(xhr.body).toBeInstanceOf(FormData);
    expect(xhr.body.get("file").name).toBe("talk.mp3");
    xhr.progress(0, 400);
    xhr.progress(100, 400);
    xhr.progress(399, 400);
    xhr.progress(400, 400);
    const body = { ok: true, file: { filename: "talk.mp3", path: "up_1" }, duration: 65, amount: 99, currency: "eur" };
    xhr.respond(200, body);
    await expect(p).resolves.toEqual(body);
    expect(seen).toEqual([0, 25, 99, 100]);
  });

  it("rejects with the server's error code", async () => {
    const p = uploadAudio(file);
    FakeXHR.last.respond(422, { ok: false, error: { code: "not_audio", message: "x" } });
    await expect(p).rejects.toMatchObject({ name: "ApiError", code: "not_audio", status: 422 });
  });

  it("rejects a non-JSON answer with http_<status>, and a dropped connection with network_error", async () => {
    const p1 = uploadAudio(file);
    FakeXHR.last.respond(502, "<html>bad gateway</html>");
    await expect(p1).rejects.toMatchObject({ code: "http_502" });
    const p2 = uploadAudio(file);
    FakeXHR.last.fail();
    await expect(p2).rejects.toBeInstanceOf(ApiError);
    await expect(p2).rejects.toMatchObject({ code: "network_error", status: 0 });
  });

  it("stops when its signal aborts", async () => {
    const ctl = new AbortController();
    const p = uploadAudio(file, { signal: ctl.signal });
    ctl.abort();
    await expect(p).rejects.toMatchObject({ name: "AbortError" });
  });
});

describe("analyzeVideo", () => {
  afterEach(() => vi.unstubAllGlobals());
  it("posts {video} and returns the analysis", async () => {
    const fetch = vi.fn(async () => json(200, { ok: true, durationMinutes: 1, durationSeconds: 1, totalMinutes: 61 / 60, duration: 61, amount: 101, currency: "eur" }));
    vi.stubGlobal("fetch", fetch);
    const r = await analyzeVideo("https://example.com/v.mp4");
    expect(r.amount).toBe(101);
    expect(fetch.mock.calls[0][0]).toBe("/services/vtt/analyzevideo");
    expect(JSON.parse(fetch.mock.calls[0][1].body)).toEqual({ video: "https://example.com/v.mp4" });
  });
});
