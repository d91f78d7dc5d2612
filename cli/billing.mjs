#!/usr/bin/env node
// The `billing` command (package.json "bin"; `npx billing --help` from a checkout). The client is
// TypeScript like the rest of the service: tsx (a runtime dependency) loads it.
import process from 'node:process';
import { register } from 'tsx/esm/api';

register();
const { runBilling } = await import('./main.ts');
process.exitCode = await runBilling(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
});
