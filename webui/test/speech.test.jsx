import { act, render, screen } from "@testing-library/react";
import { afterAll, describe, expect, it } from "vitest";
import { changeLanguage } from "../src/i18n.js";
import { speechAmount } from "../src/lib/duration.js";
import Speech from "../src/screens/transcription/Speech.jsx";

const nb = (s) => s.replace(/\s/g, " ");

describe("speechAmount", () => {
  it("says seconds under a minute, else whole minutes to the nearest", () => {
    expect(speechAmount(0)).toEqual({ key: "speechSeconds", count: 0 });
    expect(speechAmount(1)).toEqual({ key: "speechSeconds", count: 1 });
    expect(speechAmount(59.2)).toEqual({ key: "speechMinutes", count: 1 }); // 60 s once rounded up
    expect(speechAmount(89)).toEqual({ key: "speechMinutes", count: 1 });
    expect(speechAmount(90)).toEqual({ key: "speechMinutes", count: 2 });
    expect(speechAmount(180)).toEqual({ key: "speechMinutes", count: 3 });
  });

  it("has no amount without a measure", () => {
    for (const v of [null, undefined, -1, NaN, "many"]) expect(speechAmount(v)).toBeNull();
  });
});

describe("<Speech>", () => {
  afterAll(() => act(() => changeLanguage("en")));
  const show = (speech, seconds, locale = "en", unmeasured = false) => {
    render(<Speech speech={speech} seconds={seconds} locale={locale} unmeasured={unmeasured} />);
    return nb(screen.queryByTestId("speech")?.textContent ?? "");
  };

  it("says how much of the recording is speech, with English plurals", () => {
    expect(show(180, 600)).toBe("About 3 minutes of speech in 10 min.");
  });

  it.each([
    [60, "About 1 minute of speech in 10 min."],
    [1, "About 1 second of speech in 10 min."],
    [45, "About 45 seconds of speech in 10 min."],
  ])("en: %i s → %s", (speech, text) => {
    expect(show(speech, 600)).toBe(text);
  });

  it.each([
    [60, "Около 1 минуты речи из 10 мин."],
    [120, "Около 2 минут речи из 10 мин."],
    [300, "Около 5 минут речи из 10 мин."],
    [1260, "Около 21 минуты речи из 10 мин."],
    [3, "Около 3 секунд речи из 10 мин."],
  ])("ru: %i s → %s", async (speech, text) => {
    await act(() => changeLanguage("ru"));
    expect(show(speech, 600, "ru")).toBe(text);
  });

  it.each([
    [0, "نحو 0 ثانية من الكلام"],
    [60, "نحو 1 دقيقة من الكلام"],
    [120, "نحو 2 دقيقتين من الكلام"],
    [180, "نحو 3 دقائق من الكلام"],
    [660, "نحو 11 دقيقة من الكلام"],
  ])("ar: %i s → %s", async (speech, text) => {
    await act(() => changeLanguage("ar"));
    expect(show(speech, 600, "ar")).toContain(text);
  });

  it("says the speech was not measured only where that is worth saying", async () => {
    await act(() => changeLanguage("en"));
    expect(show(null, 600)).toBe("");
    expect(show(undefined, 600, "en", true)).toMatch(/^We could not check this video for speech before payment/);
  });
});
