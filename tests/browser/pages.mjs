// The pages for people, used as people use them, in headless Chromium. One
// part a run (PART), as tests/browser/main.rs asks, between which it reads
// the emails the server sent and checks what was done:
//   subscriber-confirm      open the confirmation link of the email
//   subscriber-unsubscribe-page    open the unsubscribe link (nothing changes)
//   subscriber-unsubscribe-button  open it again and press its button
//   console-framed          another site's page frames the console: refused
//   owner                   sign in with a printed link, look at the
//                           dashboard, approve a key request with a chosen
//                           scope, write, preview, save and publish a post
//                           with its notification, requeue a failed email
// A screenshot of each page is kept. Input (environment): BASE_URL,
// CHROMIUM, SCREENSHOTS, PART, and LINK (the link the part starts from).
// Output: a line per page on stdout (`ok <name>`, and `key <key>` for the
// key shown); on failure, the reason on stderr, a screenshot of the moment,
// and exit status 1.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { STEP_TIMEOUT_MS, env, launchChromium } from "./launch.mjs";

const screenshots = env("SCREENSHOTS");
mkdirSync(screenshots, { recursive: true });

const parts = {
  "subscriber-confirm": async (page, step) => {
    await step("subscriber-confirmed", async () => {
      await page.goto(env("LINK"));
      await expectText(page, "h1", "You are subscribed");
    });
  },
  "subscriber-unsubscribe-page": async (page, step) => {
    await step("subscriber-unsubscribe-page", async () => {
      await page.goto(env("LINK"));
      await expectText(page, "h1", "Unsubscribe?");
    });
  },
  "subscriber-unsubscribe-button": async (page, step) => {
    await step("subscriber-unsubscribed", async () => {
      await page.goto(env("LINK"));
      await page.getByRole("button", { name: "Unsubscribe" }).click();
      await expectText(page, "h1", "You are unsubscribed");
    });
  },
  "console-framed": async (page, step) => {
    await step("console-framed", async () => {
      // Another site's page that frames the console's sign-in page.
      await page.setContent(`<h1>Another site</h1><iframe src="${env("LINK")}" width="600" height="300"></iframe>`);
      const frame = page.frames()[1];
      if (!frame) throw new Error("no frame on the page");
      await frame.waitForLoadState().catch(() => {});
      const inside = await frame.content().catch(() => "");
      if (inside.includes("Sign in to the console")) throw new Error("the console showed in a frame");
    });
  },
  owner: async (page, step) => {
    await step("owner-dashboard", async () => {
      await page.goto(env("LINK"));
      await page.getByRole("button", { name: "Sign in" }).click();
      await expectText(page, "h1", "Dashboard");
      const charts = await page.locator("svg.chart").count();
      if (charts !== 3) throw new Error(`${charts} charts on the dashboard, not 3`);
    });
    await step("owner-key-requests", async () => {
      await page.getByRole("link", { name: /key requests waiting/ }).click();
      await expectText(page, "h1", "Key requests waiting");
      await page.getByLabel("analytics:read").check();
    });
    await step("owner-key-issued", async () => {
      await page.getByRole("button", { name: "Approve" }).click();
      await expectText(page, "h1", "Approved");
      console.log(`key ${await page.locator("code.key").innerText()}`);
    });
    await step("owner-post-preview", async () => {
      await page.getByRole("link", { name: "Posts" }).click();
      await page.getByRole("link", { name: "Write a new post" }).click();
      await page.getByLabel("Slug").fill("from-the-console");
      await page.getByLabel("Title").fill("From the console");
      await page.getByLabel("Summary").fill("Written, previewed and published in a browser.");
      await page.getByLabel("Tags").fill("console");
      await page.getByLabel("Body").fill("# From the console\n\nWritten in **Markdown**, with a [link](https://example.test/).");
      await page.getByRole("button", { name: "Preview" }).click();
      await expectText(page, ".preview h1", "From the console");
    });
    await step("owner-post-confirm", async () => {
      await page.getByRole("button", { name: "Save draft" }).click();
      await page.getByRole("link", { name: "Publish…" }).click();
      await expectText(page, "h1", "Publish");
      await page.getByLabel(/Email it to the 1 subscriber/).check();
    });
    await step("owner-post-published", async () => {
      await page.getByRole("button", { name: "Publish" }).click();
      await expectText(page, "h1", "Published: From the console");
      await expectText(page, "main", "Emails queued for the subscribers: 1.");
    });
    await step("owner-failed-emails", async () => {
      await page.getByRole("link", { name: "Failed emails" }).click();
      await expectText(page, "h1", "Failed emails");
      await page.getByRole("button", { name: "Requeue" }).first().click();
      await expectText(page, "h1", "Failed emails");
    });
  },
};

const part = parts[env("PART")];
if (!part) throw new Error(`no part ${env("PART")}`);
const browser = await launchChromium();
let failed = false;
try {
  // The subscriber on a phone, the owner on a laptop.
  const viewport = env("PART") === "owner" ? { width: 1280, height: 1000 } : { width: 390, height: 844 };
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    // A page the CSP refused something on says so here (the framed part's
    // refusal is what it looks for).
    if (message.type() === "error" && env("PART") !== "console-framed") {
      problems.push(`console: ${message.text()}`);
    }
  });
  await part(page, async (name, body) => {
    const shot = join(screenshots, `${name}.png`);
    try {
      await body();
      await page.screenshot({ path: shot, fullPage: true });
      if (problems.length) throw new Error(problems.join("\n"));
      console.log(`ok ${name} (screenshot ${shot})`);
    } catch (error) {
      await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
      throw new Error(`${name}: ${error.message} (screenshot ${shot})`);
    }
  });
} catch (error) {
  failed = true;
  console.error(`FAILED ${error.message}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);

async function expectText(page, selector, text) {
  const found = await page.locator(selector).first().innerText();
  if (!found.includes(text)) throw new Error(`${selector} says "${found}", not "${text}"`);
}
