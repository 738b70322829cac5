import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import App from "../src/App.jsx";
import { changeLanguage } from "../src/i18n.js";
import { CONFIG, json } from "./fixtures.js";

describe("layout", () => {
  afterEach(async () => {
    await act(() => changeLanguage("en"));
    vi.unstubAllGlobals();
  });

  it("shows title, nav with the active link, footer version, and switches to Arabic right to left", async () => {
    window.history.replaceState(null, "", "/");
    vi.stubGlobal("fetch", vi.fn(async () => json(200, CONFIG)));
    render(<App />);
    expect(screen.getByText("Parla", { selector: "a" })).toBeTruthy();
    expect(screen.getByRole("link", { name: "About" }).getAttribute("aria-current")).toBe("page");
    expect(screen.getByRole("link", { name: "Text to speech" }).getAttribute("aria-current")).toBeNull();
    await waitFor(() => expect(screen.getByText("v3.3.2")).toBeTruthy());
    expect(document.documentElement.lang).toBe("en");
    expect(document.title).toContain("Parla");

    await act(async () => fireEvent.change(screen.getByTestId("language"), { target: { value: "ar" } }));
    await waitFor(() => expect(document.documentElement.dir).toBe("rtl"));
    expect(document.documentElement.lang).toBe("ar");
    expect(screen.getByRole("link", { name: "تحويل النص إلى كلام" })).toBeTruthy();
    expect(document.querySelector('meta[property="og:locale"]').getAttribute("content")).toBe("ar_AR");
    expect(localStorage.getItem("lang")).toBe("ar");

    // In-app navigation highlights the new link.
    await act(async () => fireEvent.click(screen.getByRole("link", { name: "تحويل الصوت إلى نص" })));
    expect(window.location.pathname).toBe("/sst");
    expect(screen.getByRole("link", { name: "تحويل الصوت إلى نص" }).getAttribute("aria-current")).toBe("page");
    await waitFor(() => expect(screen.getByRole("heading", { level: 1, name: "تحويل الصوت إلى نص" })).toBeTruthy());
    expect(screen.getByLabelText("الملف الصوتي").getAttribute("type")).toBe("file");
  });
});
