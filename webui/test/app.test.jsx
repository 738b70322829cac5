import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import App from "../src/App.jsx";
import { changeLanguage } from "../src/i18n.js";
import { CONFIG, closed, json } from "./fixtures.js";

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
    // The address follows the language, and links stay in it.
    await waitFor(() => expect(window.location.pathname).toBe("/ar"));
    expect(screen.getByRole("link", { name: "تحويل الصوت إلى نص" }).getAttribute("href")).toBe("/ar/sst");

    // In-app navigation highlights the new link.
    await act(async () => fireEvent.click(screen.getByRole("link", { name: "تحويل الصوت إلى نص" })));
    expect(window.location.pathname).toBe("/ar/sst");
    expect(screen.getByRole("link", { name: "تحويل الصوت إلى نص" }).getAttribute("aria-current")).toBe("page");
    await waitFor(() => expect(screen.getByRole("heading", { level: 1, name: "تحويل الصوت إلى نص" })).toBeTruthy());
    expect(screen.getByLabelText("الملف الصوتي").getAttribute("type")).toBe("file");

    // Back to English: the English address has no prefix.
    await act(async () => fireEvent.change(screen.getByTestId("language"), { target: { value: "en" } }));
    await waitFor(() => expect(window.location.pathname).toBe("/sst"));
  });

  it("tags Chinese zh-Hans, as the letters, the link page and the server's pages do", async () => {
    window.history.replaceState(null, "", "/");
    vi.stubGlobal("fetch", vi.fn(async () => json(200, CONFIG)));
    render(<App />);
    await act(async () => fireEvent.change(screen.getByTestId("language"), { target: { value: "zh" } }));
    await waitFor(() => expect(document.documentElement.lang).toBe("zh-Hans"));
    expect(screen.getByRole("option", { name: "简体中文" }).getAttribute("lang")).toBe("zh-Hans");
    expect(document.querySelector('meta[property="og:locale"]').getAttribute("content")).toBe("zh_CN");
  });

  it("leaves a closed service out of the menu, and the home page names what is offered now", async () => {
    window.history.replaceState(null, "", "/");
    const config = closed("vtt");
    config.services = { ...config.services, sst: { open: false, reason: "engine_unavailable" } };
    vi.stubGlobal("fetch", vi.fn(async () => json(200, config)));
    render(<App />);
    await waitFor(() => expect(screen.getByTestId("open-services")).toBeTruthy());
    const nav = screen.getByRole("navigation", { name: "Main" });
    expect([...nav.querySelectorAll("a")].map((a) => a.textContent)).toEqual(["About", "Text to speech", "API"]);
    expect(screen.getByTestId("open-services").textContent).toBe("Offered now: Text to speech");
    expect(screen.getByRole("link", { name: "Try text to speech" })).toBeTruthy();

    // The closed page itself, reached by its address, says so in the visitor's words and leads on.
    await act(async () => window.history.pushState(null, "", "/vtt"));
    await act(async () => window.dispatchEvent(new PopStateEvent("popstate")));
    await waitFor(() => expect(screen.getByTestId("service-closed")).toBeTruthy());
    const page = screen.getByTestId("service-closed").textContent;
    expect(page).toContain("Not offered here at the moment");
    expect(page).not.toMatch(/engine|server/i);
    expect(screen.getByTestId("service-closed").querySelector("a").getAttribute("href")).toBe("/tts");
  });

  it("takes contact and version from the served page, and links the legal pages from the footer", async () => {
    window.history.replaceState(null, "", "/es/privacy");
    const meta = document.createElement("meta");
    meta.name = "parla:site";
    meta.content = JSON.stringify({ contact: "hi@parla.example", version: "v7.7.7", retention: { linkDays: 4, uploadHours: 9, unpaidHours: 5 } });
    document.head.appendChild(meta);
    vi.resetModules();
    const { default: FreshApp } = await import("../src/App.jsx");
    const i18n = await import("../src/i18n.js");
    await act(() => i18n.changeLanguage("es"));
    // /api/config fails: the footer still has both, from the page.
    vi.stubGlobal("fetch", vi.fn(async () => json(503, { error: { code: "internal" } })));
    render(<FreshApp />);
    expect(screen.getByText("v7.7.7")).toBeTruthy();
    expect(screen.getByRole("link", { name: "Contacto" }).getAttribute("href")).toBe("mailto:hi@parla.example");
    // The legal pages are a chunk of their own, loaded with the page.
    expect(await screen.findByRole("heading", { level: 1, name: "Política de privacidad" })).toBeTruthy();
    const kept = screen.getByTestId("retention").textContent;
    expect(kept).toContain("4 días");
    expect(kept).toContain("9 horas");
    expect(kept).toContain("5 horas");
    for (const [name, href] of [["Condiciones de servicio", "/es/terms"], ["Política de reembolsos", "/es/refunds"]]) {
      expect(screen.getAllByRole("link", { name }).some((a) => a.getAttribute("href") === href)).toBe(true);
    }
    meta.remove();
    window.history.replaceState(null, "", "/");
  });
});
