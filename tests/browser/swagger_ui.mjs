// Swagger UI's Authorize dialog, used as a person would use it, in headless
// Chromium: for each scenario, "Try it out" on a protected operation is
// refused (401) before authorizing and succeeds after.
//
// Run by tests/browser/main.rs, which starts the server, makes the
// credentials and checks what the calls did. Input (environment):
//   BASE_URL            the server, e.g. http://127.0.0.1:38211
//   CHROMIUM            the browser executable
//   SCREENSHOTS         the folder for the screenshots (kept as an artifact)
//   PORTFOLIO_API_KEY   a portfolio key with analytics:read
//   OAUTH_CLIENT_ID, OAUTH_CLIENT_SECRET  a portfolio OAuth client with keys:manage
//   PETSTORE_USERNAME, PETSTORE_PASSWORD  a pet store user
// Output: a line per scenario on stdout; on failure, the reason on stderr,
// a screenshot of the moment, and exit status 1.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { STEP_TIMEOUT_MS, env, launchChromium } from "./launch.mjs";

const base = env("BASE_URL");
const screenshots = env("SCREENSHOTS");
mkdirSync(screenshots, { recursive: true });

const PORTFOLIO = "Portfolio (/api)";

const browser = await launchChromium();

let failed = false;
try {
  await scenario("portfolio-api-key", async (page) => {
    await openDocs(page, PORTFOLIO);
    const operation = await expand(page, "getAnalyticsSummary");
    await expectStatus(page, operation, 401, "before authorizing");
    await authorizeDialog(page, async (dialog) => {
      const container = dialog.locator(".auth-container", { hasText: "api_key" });
      await container.locator("#api_key_value").fill(env("PORTFOLIO_API_KEY"));
      await container.locator("button.authorize").click();
      await authorized(container);
    });
    const body = await expectStatus(page, operation, 200, "after authorizing");
    mustContain(body, '"from"', "the analytics summary");
    return operation;
  });

  await scenario("portfolio-client-credentials", async (page) => {
    await openDocs(page, PORTFOLIO);
    const operation = await expand(page, "listOauthClients");
    await expectStatus(page, operation, 401, "before authorizing");
    await authorizeDialog(page, async (dialog) => {
      const container = dialog.locator(".auth-container", { hasText: "clientCredentials" });
      const secret = container.locator("#client_secret_clientCredentials");
      await container.locator("#client_id_clientCredentials").fill(env("OAUTH_CLIENT_ID"));
      await container.locator('label[for="keys:manage-clientCredentials-checkbox-oauth"]').click();
      // A mistyped secret: the token endpoint's refusal shows in the dialog
      // (and no password dialog of the browser's own stops the page).
      await secret.fill(`${env("OAUTH_CLIENT_SECRET")}-mistyped`);
      await container.locator("button.authorize").click();
      const refusal = await container.locator(".errors").innerText();
      mustContain(refusal, "invalid_client", "the dialog after a wrong secret");
      await secret.fill(env("OAUTH_CLIENT_SECRET"));
      await container.locator("button.authorize").click();
      await authorized(container);
    });
    const body = await expectStatus(page, operation, 200, "after authorizing");
    // The list holds the client that Swagger UI just authenticated as.
    mustContain(body, env("OAUTH_CLIENT_ID"), "the list of OAuth clients");
    return operation;
  });

  await scenario("petstore-implicit", async (page) => {
    await openDocs(page, null);
    const operation = await expand(page, "addPet");
    await expectStatus(page, operation, 401, "before authorizing");
    await authorizeDialog(page, async (dialog) => {
      const container = dialog.locator(".auth-container", { hasText: "implicit" });
      await container.locator("#client_id_implicit").fill("swagger-ui");
      await container.getByText("select all").click();
      // Authorize opens the sign-in page in a pop-up, which sends the token
      // to Swagger UI's oauth2-redirect.html and closes.
      const [popup] = await Promise.all([
        page.waitForEvent("popup", { timeout: STEP_TIMEOUT_MS }),
        container.locator("button.authorize").click(),
      ]);
      await popup.locator("#username").fill(env("PETSTORE_USERNAME"));
      await popup.locator("#password").fill(env("PETSTORE_PASSWORD"));
      await popup.screenshot({ path: join(screenshots, "petstore-implicit-sign-in.png") });
      await Promise.all([
        popup.waitForEvent("close", { timeout: STEP_TIMEOUT_MS }),
        popup.getByRole("button", { name: "Sign in" }).click(),
      ]);
      await authorized(container);
    });
    await expectStatus(page, operation, 200, "after authorizing");
    return operation;
  });
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);

// Runs one scenario in a browser context of its own (nothing carried over),
// with a screenshot at the end, or at the moment it failed.
async function scenario(name, steps) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 1100 } });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  const shot = join(screenshots, `${name}.png`);
  try {
    const operation = await steps(page);
    await operation.locator(".live-responses-table").scrollIntoViewIfNeeded();
    await page.screenshot({ path: shot });
    if (problems.length) throw new Error(problems.join("\n"));
    console.log(`ok ${name} (screenshot ${shot})`);
  } catch (error) {
    failed = true;
    await page.screenshot({ path: shot }).catch(() => {});
    console.error(`FAILED ${name}: ${error.message}\n(screenshot ${shot})`);
  } finally {
    await context.close();
  }
}

// Swagger UI, showing the pet store's document or the one named.
async function openDocs(page, definition) {
  const query = definition ? `?urls.primaryName=${encodeURIComponent(definition)}` : "";
  await page.goto(`${base}/docs/${query}`);
  await page.locator(".opblock").first().waitFor();
}

// Opens an operation and turns on "Try it out".
async function expand(page, operationId) {
  const operation = page.locator(`.opblock[id$="-${operationId}"]`);
  await operation.locator(".opblock-summary").click();
  await operation.locator("button.try-out__btn").click();
  return operation;
}

// Presses Execute and waits for the answer; fails unless its status is
// `status`. Returns the response body as shown.
async function expectStatus(page, operation, status, when) {
  // A second Execute replaces the answer: clear the old one first, so the
  // wait below is for the new one.
  const clear = operation.locator("button.btn-clear");
  if (await clear.count()) await clear.click();
  await operation.locator("button.execute").click();
  const row = operation.locator(".live-responses-table .response").first();
  const shown = (await row.locator(".response-col_status").innerText()).trim();
  const body = await row.locator(".response-col_description").innerText();
  if (shown !== String(status)) {
    throw new Error(`${when}: Swagger UI shows ${shown}, expected ${status}:\n${body}`);
  }
  return body;
}

// Opens the Authorize dialog, runs `fill` in it, and closes it.
async function authorizeDialog(page, fill) {
  await page.locator(".auth-wrapper button.authorize").click();
  const dialog = page.locator(".dialog-ux .modal-ux");
  await dialog.waitFor();
  await fill(dialog);
  await dialog.locator("button.btn-done").first().click();
  await dialog.waitFor({ state: "detached" });
}

// Waits until a section of the dialog says "Authorized", or fails with the error
// Swagger UI shows there.
async function authorized(container) {
  const done = container.getByRole("heading", { name: "Authorized" });
  const error = container.locator(".errors");
  await done.or(error).first().waitFor();
  if (await error.count()) {
    throw new Error(`Swagger UI could not authorize: ${await error.innerText()}`);
  }
}

function mustContain(text, expected, what) {
  if (!text.includes(expected)) {
    throw new Error(`${what} does not hold ${expected}:\n${text}`);
  }
}
