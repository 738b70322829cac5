import { act, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigContext } from "../src/config.jsx";
import { changeLanguage } from "../src/i18n.js";
import About from "../src/screens/about/About.jsx";
import { CONFIG } from "./fixtures.js";

const privacyPoint = () => screen.getByRole("heading", { name: /privacy|الخصوصية/ }).parentElement.querySelector("p")?.textContent;
const renderAbout = (config) =>
  render(
    <ConfigContext.Provider value={config}>
      <About />
    </ConfigContext.Provider>,
  );

describe("about page", () => {
  afterEach(async () => {
    await act(() => changeLanguage("en"));
  });

  it("says what the privacy page says: the address erased once the link is sent, the result kept the server's days", () => {
    renderAbout({ ...CONFIG, linkDays: 7, retention: { linkDays: 7, uploadHours: 24, unpaidHours: 24 } });
    expect(privacyPoint()).toBe(
      "Payments go through a secure card checkout. We keep no accounts. Your e-mail address is erased as soon as the e-mail with your link has been sent, and your result file is kept 7 days for your download link, then deleted.",
    );
  });

  it("in Arabic too, with the number of days", async () => {
    await act(() => changeLanguage("ar"));
    renderAbout(CONFIG);
    expect(privacyPoint()).toContain("ويُحفظ ملف النتيجة 10 أيام لرابط التنزيل، ثم يُحذف");
  });

  it("states no number of days before it knows one", () => {
    renderAbout(null);
    expect(privacyPoint()).toBeUndefined();
  });
});
