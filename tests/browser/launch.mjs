// What both browser runs share: reading their input from the environment,
// and headless Chromium started as this machine allows.

import { chromium } from "playwright-core";

// An input of the run, which must be set.
export const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

// Long enough for a slow machine, short enough that a hang fails the test.
export const STEP_TIMEOUT_MS = 15_000;

// Chromium at $CHROMIUM: no sandbox (CI runs as root) and no calls to
// Google's services (the machine has no internet).
export function launchChromium() {
  return chromium.launch({
    executablePath: env("CHROMIUM"),
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}
