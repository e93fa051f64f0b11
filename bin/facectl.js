#!/usr/bin/env node
// The installed entry point: run the built CLI and hand its exit code to Node. CommonJS (see
// bin/package.json), as is dist/cli.cjs: `facectl --version` and `--help` are answered before Node
// starts its ES module loader, which the other commands load from there (scripts/build.mjs).
require('../dist/cli.cjs')
  .runFromProcess()
  .then((code) => {
    process.exitCode = code;
  });
