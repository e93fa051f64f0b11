#!/usr/bin/env node
// The installed entry point: load the built CLI and hand its exit code to Node.
const { runFromProcess } = await import('../dist/cli.js');
process.exitCode = await runFromProcess();
