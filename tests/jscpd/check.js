#!/usr/bin/env node
// Counts the repeated blocks in server/src with jscpd (the settings are in
// .jscpd.json: Rust, blocks of six lines or more, `use` lists and `mod`
// declarations left out as boilerplate), prints each one, and fails when
// there are more than package.json's config.maxClones.
// Run by .ci/run after `npm ci` here; uses only this folder's jscpd.
"use strict";

const { spawnSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const here = __dirname;
const root = path.resolve(here, "..", "..");
const { maxClones } = require("./package.json").config;

// The console reporter prints the clones; the JSON one is read for the count.
const reports = fs.mkdtempSync(path.join(os.tmpdir(), "jscpd-"));
const jscpd = spawnSync(
  path.join(here, "node_modules", ".bin", "jscpd"),
  [
    "--config", path.join(here, ".jscpd.json"),
    "--reporters", "console,json",
    "--output", reports,
    "--no-tips",
    ...(process.stdout.isTTY ? [] : ["--no-colors"]),
    "server/src",
  ],
  { cwd: root, stdio: "inherit" },
);
if (jscpd.status !== 0) {
  console.error(`jscpd failed (${jscpd.error || `exit code ${jscpd.status}`})`);
  process.exit(2);
}
const report = JSON.parse(fs.readFileSync(path.join(reports, "jscpd-report.json"), "utf8"));
fs.rmSync(reports, { recursive: true, force: true });

const clones = report.statistics.total.clones;
const limit = `at most ${maxClones} allowed (config.maxClones in tests/jscpd/package.json)`;
if (clones > maxClones) {
  console.error(`${clones} repeated blocks in server/src: ${limit}`);
  process.exit(1);
}
console.log(`${clones} repeated blocks in server/src: ${limit}`);
if (clones < maxClones) {
  console.log(`fewer than allowed: lower config.maxClones to ${clones} to keep it so`);
}
