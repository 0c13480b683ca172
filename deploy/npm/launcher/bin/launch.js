// Runs SOLARIA's native binary for this platform, as the coding agents' own npm
// packages do: the binaries live in one package per platform (an optional
// dependency, installed only where its `os` and `cpu` match), and this launcher
// finds the one installed and hands it the arguments, the terminal and the exit code.
"use strict";

const { spawnSync } = require("node:child_process");
const path = require("node:path");

const PLATFORMS = {
  "linux-x64": "@solaria-memory/linux-x64",
  "linux-arm64": "@solaria-memory/linux-arm64",
  "darwin-arm64": "@solaria-memory/darwin-arm64",
  "darwin-x64": "@solaria-memory/darwin-x64",
};

function binaryPath(name) {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  const archives =
    "install from a release archive instead (deploy/install-release.sh, docs/guide/install.md in SOLARIA's repository) or build from source (deploy/install.sh)";
  if (!pkg) {
    return { error: `solaria: no npm package carries SOLARIA for ${key}: ${archives}` };
  }
  try {
    const manifest = require.resolve(`${pkg}/package.json`);
    return { path: path.join(path.dirname(manifest), "bin", name) };
  } catch {
    return {
      error: `solaria: ${pkg}, the package with SOLARIA's binaries for ${key}, is not installed (npm leaves out an optional dependency it cannot fetch): reinstall solaria-memory with its optional dependencies, or ${archives}`,
    };
  }
}

module.exports = function launch(name) {
  const found = binaryPath(name);
  if (found.error) {
    process.stderr.write(found.error + "\n");
    process.exit(1);
  }
  const run = spawnSync(found.path, process.argv.slice(2), { stdio: "inherit" });
  if (run.error) {
    process.stderr.write(`solaria: cannot run ${found.path}: ${run.error.message}\n`);
    process.exit(1);
  }
  if (run.signal) {
    process.kill(process.pid, run.signal);
  }
  process.exit(run.status ?? 1);
};
