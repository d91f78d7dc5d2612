#!/usr/bin/env node
// The `billing` command (package.json "bin"; `npx billing --help` from a checkout). The client is
// TypeScript like the rest of the service: tsx (a runtime dependency) loads it.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
