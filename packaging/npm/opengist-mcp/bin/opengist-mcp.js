#!/usr/bin/env node
// Launcher for the native opengist-mcp server. The binary itself comes in one package per
// platform (platforms.json), each an optional dependency of this one that npm installs only
// on its own os and cpu. This file finds that binary and runs it with this process's
// arguments, standard input, output and error (an MCP client speaks to the server over
// stdio), passes on the signals that stop it, and exits as the server exited.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");
const platforms = require("../platforms.json");

function fail(message) {
  process.stderr.write(`opengist-mcp (npm launcher): ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  const key = `${process.platform}-${process.arch}`;
  const entry = platforms[key];
  if (!entry) {
    fail(
      `there is no prebuilt binary for this platform (${key}); prebuilt binaries exist for ` +
        `${Object.keys(platforms).join(", ")}. Build it from source instead, with a Rust ` +
        "toolchain: cargo install --locked opengist-mcp (or from a clone: " +
        "cargo install --locked --path opengist-mcp).",
    );
  }
  let manifest;
  try {
    manifest = require.resolve(`${entry.package}/package.json`);
  } catch {
    fail(
      `the package ${entry.package}, which carries the binary for ${key}, is not installed. ` +
        "npm installs it as an optional dependency of @opengist-mcp/opengist-mcp: install again " +
        "without --omit=optional or --no-optional (npm install @opengist-mcp/opengist-mcp), or " +
        "add it yourself " +
        `(npm install ${entry.package}).`,
    );
  }
  return path.join(path.dirname(manifest), "bin", entry.binary);
}

const binary = binaryPath();
const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });

child.on("error", (error) => fail(`could not start ${binary}: ${error.message}`));

// A client stops the server by signalling the process it started, which is this one.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const signal of forwarded) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so the caller sees what the server saw.
    for (const s of forwarded) process.removeAllListeners(s);
    try {
      process.kill(process.pid, signal);
    } catch {
      // Signals this platform cannot raise: fall through to a plain failure.
    }
    process.exit(1);
  }
  process.exit(code ?? 1);
});
