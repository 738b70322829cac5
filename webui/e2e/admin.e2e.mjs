// Browser test of the admin area (issue 15), as an operator does it, with the keyboard
// where a keyboard user would: sign in, search an order by its checkout session, open its
// timeline, resend the delivery e-mail to a typed address, read the page at 320 px, and sign
// everyone out (the device cookie kept).
// Needs the server started with ADMIN_PASSWORD_HASH (.ci/e2e.sh makes it with
// `parla hash-password`) and ADMIN_PASSWORD, OUTBOX_DIR in the environment.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { abort, assert, BASE, check, emlText, facts, finish, OUTBOX, openBrowser, until } from "./harness.mjs";

const PASSWORD = process.env.ADMIN_PASSWORD || "";
const COPY_TO = "operator-copy@example.org";

/** The .eml files in the outbox (one per message). */
function letters() {
  return readdirSync(OUTBOX).filter((n) => n.endsWith(".eml")).map((n) => emlText(readFileSync(join(OUTBOX, n), "latin1")));
}

async function main() {
  const { page, pageErrors, shot, close } = await openBrowser();
  let sessionId = "";
  try {
    assert(PASSWORD, "ADMIN_PASSWORD not set");
    await check("an order is paid and delivered (through the API and the test checkout)", async () => {
      const res = await page.request.post(`${BASE}/payment/tts/create-checkout-session`, {
        data: { order: { voice: "alloy", input: "An order for the admin journey.", format: "mp3", speed: 1,
          email: "visitor@example.com", emailVerify: "visitor@example.com", locale: "en" } },
      });
      assert(res.ok(), `checkout: ${res.status()}`);
      const co = await res.json();
      sessionId = co.sessionId;
      const pay = await page.request.post(`${co.url}/pay`, { maxRedirects: 0 });
      assert(pay.status() === 303, `pay: ${pay.status()}`);
      await until(async () => {
        const r = await page.request.post(`${BASE}/services/tts`, { data: { sessionId } });
        return r.status() === 200;
      }, "the delivered result", 60000, 300);
    });

    await check("/admin sends a stranger to the sign-in page; a wrong password is refused", async () => {
      await page.goto(`${BASE}/admin/orders`);
      await page.waitForURL(`${BASE}/admin/sign-in`);
      await page.getByLabel("Password").fill("not the password");
      await page.keyboard.press("Enter");
      await page.getByRole("alert").waitFor();
      assert((await page.getByRole("alert").textContent()).includes("Wrong password"), "no refusal shown");
    });

    await check("sign in with the keyboard", async () => {
      await page.getByLabel("Password").fill(PASSWORD);
      await page.keyboard.press("Enter");
      await page.waitForURL(`${BASE}/admin/orders`);
      await page.getByRole("heading", { name: "Orders" }).waitFor();
      await shot("admin-orders");
    });

    await check("search by checkout session id finds the order", async () => {
      await page.getByLabel(/Order id, session id/).fill(sessionId);
      await page.getByLabel("State").selectOption("delivered");
      await page.keyboard.press("Enter");
      await page.waitForURL(/\/admin\/orders\?q=/);
      assert((await page.getByTestId("order-row").count()) === 1, "not exactly one row");
    });

    await check("open the timeline from the result (keyboard: focus the link, Enter)", async () => {
      await page.getByTestId("order-row").getByRole("link").focus();
      await page.keyboard.press("Enter");
      await page.waitForURL(/\/admin\/orders\/[A-Za-z0-9_-]+$/);
      const tl = await page.getByTestId("timeline").textContent();
      for (const want of ["created", "paid", "fulfil attempt 1", "e-mailed", "delivered", "link expires"]) {
        assert(tl.includes(want), `timeline lacks ${want}: ${tl}`);
      }
      assert((await page.getByTestId("state").textContent()).startsWith("done"), "state is not done");
      await shot("admin-order");
    });

    await check("resend the e-mail to a typed address: one more letter, the page says so", async () => {
      const before = letters().length;
      await page.getByLabel("To").fill(COPY_TO);
      await page.getByRole("button", { name: "Resend e-mail" }).click();
      await page.getByTestId("notice").waitFor();
      const notice = await page.getByTestId("notice").textContent();
      assert(notice.includes("resend — ok"), `notice: ${notice}`);
      await until(() => letters().length === before + 1, "one more letter", 10000, 200);
      assert(letters().filter((l) => l.includes(COPY_TO)).length === 1, "no letter to the typed address");
      facts.adminResend = notice;
    });

    await check("the order page reads at 320 px without sideways scrolling", async () => {
      await page.setViewportSize({ width: 320, height: 800 });
      await page.reload();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert(width <= 320, `page is ${width}px wide`);
      await shot("admin-order-320");
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    await check("River's UI opens under /admin/jobs when signed in", async () => {
      const res = await page.request.get(`${BASE}/admin/jobs/api/jobs?state=completed`);
      assert(res.ok(), `status ${res.status()}`);
      assert((await res.text()).includes('"fulfil"'), "no fulfil job listed");
      // The page itself, in the browser: it runs under the area's Content-Security-Policy.
      await page.goto(`${BASE}/admin/jobs/`, { waitUntil: "networkidle" });
      await until(() => page.evaluate(() => document.querySelectorAll("#root *").length > 20), "River's UI drawn", 15000);
    });

    await check("signing everyone out keeps this browser's device cookie unless the box asks to revoke it", async () => {
      await page.goto(`${BASE}/admin/audit`);
      const box = page.getByLabel(/Revoke the device cookies too/);
      assert(!(await box.isChecked()), "the revoke box starts checked");
      const device = async () => (await page.context().cookies()).find((c) => c.name === "parla_admin_device");
      const before = await device();
      assert(before, "no device cookie after signing in");
      await page.getByRole("button", { name: "Sign everyone out" }).click();
      await page.waitForURL(`${BASE}/admin/sign-in`);
      const after = await device();
      assert(after && after.value === before.value, "the device cookie went or changed");
      await page.getByLabel("Password").fill(PASSWORD);
      await page.keyboard.press("Enter");
      await page.waitForURL(`${BASE}/admin/orders`);
    });

    await check("no uncaught errors or unexpected dialogs in the page", async () => {
      assert(pageErrors.length === 0, pageErrors.join(" | "));
    });
  } catch (err) {
    abort(err);
  } finally {
    await close();
  }
  finish();
}

main();
