import { cleanup } from "@testing-library/react";
import { afterEach, beforeAll } from "vitest";
import { initI18n } from "../src/i18n.js";

beforeAll(async () => {
  await initI18n();
});

afterEach(() => {
  cleanup();
  globalThis.localStorage?.clear();
});

// jsdom does not implement scrolling; the router scrolls to the top on navigation.
if (typeof window !== "undefined") window.scrollTo = () => {};
