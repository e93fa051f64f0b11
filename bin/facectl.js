#!/usr/bin/env node
// The installed entry point: load the built CLI and hand its exit code to Node. Nothing else happens here,
// so `facectl --version` costs no more than the entry chunk it imports.
import { runFromProcess } from '../dist/cli.js';

process.exitCode = await runFromProcess();
