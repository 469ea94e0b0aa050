#!/usr/bin/env node
// Thin launcher: the CLI lives in dist/ so that `npx ts-operator-sdk` starts
// without compiling anything.
import { run } from '../dist/src/main.js';

// `ts-operator-sdk --help | head` closes the pipe early; that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

process.exitCode = await run(process.argv);
