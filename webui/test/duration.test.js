import { describe, expect, it } from "vitest";
import { formatClock, formatDuration, formatLimit, formatSize, splitDuration, wholeSeconds } from "../src/lib/duration.js";
import { engineName } from "../src/lib/engines.js";

const nb = (s) => s.replace(/\s/g, " "); // Intl uses no-break spaces

describe("wholeSeconds (browser duration, rounded up)", () => {
  it.each([
    [1, 1],
    [1.0001, 2],
    [64.2, 65],
    [0.3, 1],
    [0, null],
    [-3, null],
    [NaN, null],
    [Infinity, null],
    [undefined, null],
  ])("%s → %s", (d, s) => expect(wholeSeconds(d)).toBe(s));
});

describe("minutes and seconds", () => {
  it.each([
    [0, 0, 0, "0:00"],
    [5, 0, 5, "0:05"],
    [60, 1, 0, "1:00"],
    [65, 1, 5, "1:05"],
    [599, 9, 59, "9:59"],
    [3600, 60, 0, "60:00"],
    [10800, 180, 0, "180:00"],
    [64.2, 1, 5, "1:05"], // fractions round up
  ])("%s s → %i min %i s, %s", (total, m, s, clock) => {
    expect(splitDuration(total)).toEqual({ minutes: m, seconds: s });
    expect(formatClock(total)).toBe(clock);
  });

  it("says it in words of the locale", () => {
    expect(nb(formatDuration(125, "en"))).toBe("2 min 5 sec");
    expect(nb(formatDuration(45, "en"))).toBe("45 sec");
    expect(nb(formatDuration(180, "en"))).toBe("3 min");
    expect(nb(formatDuration(0, "en"))).toBe("0 sec");
    expect(nb(formatDuration(125, "ru"))).toBe("2 мин 5 с");
    expect(formatDuration(125, "ar")).not.toContain("min");
  });

  it("states a limit in its largest whole unit", () => {
    expect(nb(formatLimit(10800, "en"))).toBe("3 hr");
    expect(nb(formatLimit(600, "en"))).toBe("10 min");
    expect(nb(formatLimit(90, "en"))).toBe("90 sec");
  });
});

describe("formatSize", () => {
  it("shows bytes as megabytes", () => {
    expect(nb(formatSize(26214400, "en"))).toBe("25 MB");
    expect(nb(formatSize(1.5 * 1048576, "en"))).toBe("1.5 MB");
    expect(nb(formatSize(26214400, "es"))).toBe("25 MB");
  });
});

describe("engineName (the provider line)", () => {
  it("names the engines", () => {
    expect(engineName("whisper")).toBe("whisper.cpp");
    expect(engineName("openai")).toBe("OpenAI");
    expect(engineName("other")).toBe("other");
    expect(engineName(undefined)).toBe("");
  });
});
