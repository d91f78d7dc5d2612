import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { ROOT_DIR } from '../runtime/config';

const SDK = path.join(ROOT_DIR, 'sdk');

/**
 * Builds the client SDK (sdk/dist, what the dashboard host serves to `npm install <url>`) when it
 * is missing or older than its sources, as `npm run sdk:build` does. For `npm start`: a newcomer's
 * checkout has never built it.
 */
export function ensureSdkBuilt(say: (m: string) => void): void {
  if (sdkIsCurrent()) return;
  say('building the client SDK (sdk/dist)');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(SDK, 'tsconfig.json')], { encoding: 'utf8' });
  if (r.status !== 0) say(`the client SDK did not build (the dashboard will not serve it): ${r.stdout}${r.stderr}`);
}

function sdkIsCurrent(): boolean {
  const built = path.join(SDK, 'dist', 'index.js');
  if (!fs.existsSync(built)) return false;
  const builtAt = fs.statSync(built).mtimeMs;
  const sources = [
    path.join(SDK, 'package.json'),
    ...fs.readdirSync(path.join(SDK, 'src')).map((f) => path.join(SDK, 'src', f)),
  ];
  return sources.every((f) => fs.statSync(f).mtimeMs <= builtAt);
}
