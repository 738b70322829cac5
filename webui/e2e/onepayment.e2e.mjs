// One order, one payment, and forms that survive (issue 12), walked in Chromium against
// the built server with the test checkout: the e-mail checked where it is typed; Cancel on
// the checkout and a reload restore the form; a second tab and Back cannot pay the same
// order again (the server refuses with order_already_paid and the page shows the way to
// the paid order); a stale session id never shows "Payment successful".
import { abort, assert, BASE, check, EMAIL, facts, finish, openBrowser } from "./harness.mjs";

const TEXT = "One order, one payment. Parla must never take the same order twice.";
const area = (p) => p.getByPlaceholder("Enter your text here");

async function fillForm(page) {
  await page.goto(`${BASE}/tts`, { waitUntil: "networkidle" });
  await area(page).fill(TEXT);
  await page.getByRole("radio", { name: "Nova" }).check();
  await page.getByRole("radio", { name: /flac/ }).check();
}

/** The number of checkout creations the page asked for, and their answers. */
function watchCheckouts(page) {
  const seen = [];
  page.on("response", (r) => {
    if (r.url().endsWith("/payment/tts/create-checkout-session")) seen.push(r.status());
  });
  return seen;
}

async function main() {
  const { context, page, pageErrors, shot, close } = await openBrowser();
  try {
    await page.goto(`${BASE}/`, { waitUntil: "networkidle" });
    await page.evaluate(() => localStorage.setItem("lang", "en"));
    const created = watchCheckouts(page);

    await check("an invalid e-mail is caught where it is typed, with the server's message", async () => {
      await fillForm(page);
      await page.getByLabel("E-mail", { exact: true }).fill("visitor@example");
      await page.getByLabel("Verify e-mail").click(); // leaves the first field
      await page.getByTestId("email-invalid").waitFor({ timeout: 5000 });
      assert((await page.getByTestId("email-invalid").textContent()) === "The e-mail address is not valid.", "message");
      await page.getByLabel("Verify e-mail").fill("visitor@example");
      assert((await page.getByTestId("pay").count()) === 0, "Pay offered with an invalid address");
      await page.getByLabel("E-mail", { exact: true }).fill(EMAIL);
      await page.getByLabel("Verify e-mail").fill(EMAIL);
      await page.getByTestId("pay").waitFor({ timeout: 5000 });
      assert((await page.getByTestId("email-invalid").count()) === 0, "warning stays after the fix");
    });

    await check("a reload before paying keeps text, voice, format and e-mail", async () => {
      await page.reload({ waitUntil: "networkidle" });
      assert((await area(page).inputValue()) === TEXT, "text lost");
      assert(await page.getByRole("radio", { name: "Nova" }).isChecked(), "voice lost");
      assert(await page.getByRole("radio", { name: /flac/ }).isChecked(), "format lost");
      assert((await page.getByLabel("E-mail", { exact: true }).inputValue()) === EMAIL, "e-mail lost");
    });

    let staleSession = "";
    await check("Cancel on the checkout, then a reload: the form is restored", async () => {
      await page.getByTestId("pay").click();
      await page.waitForURL(/\/checkout\/test\//, { timeout: 15000 });
      staleSession = await page.evaluate(() => localStorage.getItem("sessionId"));
      await page.locator('form[action$="/cancel"] button').click();
      await page.waitForURL(`${BASE}/tts**`, { timeout: 15000 });
      await area(page).waitFor();
      await page.reload({ waitUntil: "networkidle" });
      assert((await area(page).inputValue()) === TEXT, "text lost after cancel");
      assert(await page.getByRole("radio", { name: "Nova" }).isChecked(), "voice lost after cancel");
      assert((await page.getByLabel("E-mail", { exact: true }).inputValue()) === EMAIL, "e-mail lost after cancel");
      await shot("one-payment-restored");
    });

    await check("a stale session id never shows 'Payment successful' and leads back to the form", async () => {
      assert(staleSession, "no session id was stored");
      await page.goto(`${BASE}/payment/success?session_id=${encodeURIComponent(staleSession)}`);
      await page.waitForURL(`${BASE}/tts`, { timeout: 10000 });
      await area(page).waitFor();
      assert((await area(page).inputValue()) === TEXT, "form not restored");
      const shown = await page.evaluate(() => document.body.innerText);
      assert(!shown.includes("Payment successful"), "success shown");
    });

    // A second tab opens the same order while the first goes to pay it.
    const tab2 = await context.newPage();
    const created2 = watchCheckouts(tab2);
    await tab2.goto(`${BASE}/tts`, { waitUntil: "networkidle" });
    let paidSession = "";
    await check("the second tab shares the open order", async () => {
      assert((await area(tab2).inputValue()) === TEXT, "the second tab does not see the order");
      const k1 = await page.evaluate(() => localStorage.getItem("orderKey.tts"));
      const k2 = await tab2.evaluate(() => localStorage.getItem("orderKey.tts"));
      assert(k1 && k1 === k2, `keys differ: ${k1} ${k2}`);
    });

    await check("the first tab pays; the page stays on 'processing' (result polling held back)", async () => {
      // The browser is kept from learning that the file is ready, so the order stays open
      // in storage as it is while processing: the case of Back during processing.
      await page.route("**/services/tts", (route) => route.fulfill({ status: 202, contentType: "application/json", body: '{"ok":true,"order":{"status":"processing","progress":50}}' }));
      await page.goto(`${BASE}/tts`, { waitUntil: "networkidle" });
      await page.getByTestId("pay").click();
      await page.waitForURL(/\/checkout\/test\//, { timeout: 15000 });
      await page.locator("button.pay").click();
      await page.waitForURL(/\/payment\/success/, { timeout: 15000 });
      paidSession = new URL(page.url()).searchParams.get("session_id");
      await page.getByText("Payment successful").waitFor({ timeout: 10000 });
    });

    await check("second tab: Pay is refused (order_already_paid) and the way to the paid order is shown", async () => {
      const before = created2.length;
      await tab2.bringToFront();
      // The tab may already know (it asks when shown); if it still offers Pay, the click is refused.
      if (await tab2.getByTestId("pay").count()) await tab2.getByTestId("pay").click().catch(() => {});
      await tab2.getByTestId("already-paid").waitFor({ timeout: 10000 });
      assert(tab2.url() === `${BASE}/tts`, `left the page: ${tab2.url()}`);
      assert(created2.slice(before).every((s) => s === 409), `checkouts answered ${created2.slice(before)}`);
      const href = await tab2.getByTestId("open-paid").getAttribute("href");
      assert(href === `/payment/success?session_id=${paidSession}`, `link ${href}`);
      await tab2.screenshot({ path: `${process.env.SCREENSHOT_DIR || "test-artifacts/screenshots"}/one-payment-second-tab.png`, fullPage: true });
      // The server agrees, asked directly.
      const res = await tab2.request.post(`${BASE}/payment/tts/create-checkout-session`, {
        data: { order: { voice: "nova", input: TEXT, format: "flac", speed: 1, email: EMAIL, emailVerify: EMAIL, locale: "en", key: await tab2.evaluate(() => localStorage.getItem("orderKey.tts")) } },
      });
      const body = await res.json();
      assert(res.status() === 409 && body.error?.code === "order_already_paid" && body.order?.sessionId === paidSession, `server: ${res.status()} ${JSON.stringify(body)}`);
    });

    await check("Back from the paid order's page to the form: no second payment offered", async () => {
      await page.bringToFront();
      await page.goBack(); // the test checkout page
      await page.goBack(); // the form
      await page.waitForURL(`${BASE}/tts`, { timeout: 15000 });
      await page.getByTestId("already-paid").waitFor({ timeout: 10000 });
      assert((await page.getByTestId("pay").count()) === 0, "Pay offered again");
      assert((await area(page).inputValue()) === TEXT, "form not kept");
    });

    await check("'Start a new order' is a new payment: a new key, the values kept", async () => {
      const old = await page.evaluate(() => localStorage.getItem("orderKey.tts"));
      await page.getByTestId("new-order").click();
      await page.getByTestId("pay").waitFor({ timeout: 5000 });
      const fresh = await page.evaluate(() => localStorage.getItem("orderKey.tts"));
      assert(fresh && fresh !== old, "same key");
      assert((await area(page).inputValue()) === TEXT, "values lost");
      facts.checkoutsAnswered = { tab1: created, tab2: created2 };
    });

    assert(pageErrors.length === 0, `page errors: ${pageErrors.join("; ")}`);
  } catch (err) {
    abort(err);
  } finally {
    await close();
  }
  finish();
}

main();
