#!/usr/bin/env node
// Thin launcher: the CLI lives in dist/ so that `npx ts-operator-sdk` starts
// without compiling anything.
import { run } from '../dist/src/cli/main.js';

process.exitCode = await run(process.argv);
