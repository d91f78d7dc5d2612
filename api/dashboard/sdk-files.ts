import fs from 'node:fs';
import path from 'node:path';
import type Koa from 'koa';
import { ROOT_DIR } from '../../runtime/config';
import { tarGz } from '../../runtime/tarball';

/**
 * The client SDK, served by the service itself (it is published nowhere else):
 * - `/sdk/billing-service-sdk-<version>.tgz`, the package as `npm install <url>` takes it;
 * - `/sdk/<version>/index.js`, the same ESM for `<script type="module">` (its siblings beside it),
 *   readable from any origin, as an app's page imports it from this host.
 * Built from sdk/ (`npm run sdk:build`; `npm start` builds it when missing). Versioned paths
 * never change content, so they are cached for a day.
 */
const SDK_DIR = path.join(ROOT_DIR, 'sdk');

interface SdkFiles {
  version: string;
  tarballName: string;
  tarball: Buffer;
  esm: Map<string, Buffer>;
}

let loaded: SdkFiles | null | undefined;

/** The built SDK, read once; null when sdk/dist has not been built. */
export function sdkFiles(): SdkFiles | null {
  if (loaded !== undefined) return loaded;
  const dist = path.join(SDK_DIR, 'dist');
  if (!fs.existsSync(path.join(dist, 'index.js'))) return null; // not cached: a later build is picked up
  const pkg = JSON.parse(fs.readFileSync(path.join(SDK_DIR, 'package.json'), 'utf8')) as { version: string };
  const built = fs
    .readdirSync(dist)
    .filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))
    .sort();
  const entries = [
    { path: 'package/package.json', body: fs.readFileSync(path.join(SDK_DIR, 'package.json')) },
    { path: 'package/README.md', body: fs.readFileSync(path.join(SDK_DIR, 'README.md')) },
    ...built.map((f) => ({ path: `package/dist/${f}`, body: fs.readFileSync(path.join(dist, f)) })),
  ];
  loaded = {
    version: pkg.version,
    tarballName: `billing-service-sdk-${pkg.version}.tgz`,
    tarball: tarGz(entries),
    esm: new Map(built.filter((f) => f.endsWith('.js')).map((f) => [f, fs.readFileSync(path.join(dist, f))])),
  };
  return loaded;
}

/** The line a newcomer types, for this deployment's dashboard host; undefined while the SDK is not built here. */
export function sdkInstallCommand(dashboardUrl: string): string | undefined {
  const files = sdkFiles();
  return files ? `npm install ${dashboardUrl}/sdk/${files.tarballName}` : undefined;
}

export function sdkModuleUrl(dashboardUrl: string): string | undefined {
  const files = sdkFiles();
  return files ? `${dashboardUrl}/sdk/${files.version}/index.js` : undefined;
}

export function sdkFileRoutes(): Koa.Middleware {
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !ctx.path.startsWith('/sdk/')) return next();
    const files = sdkFiles();
    if (!files) return next();
    const rest = ctx.path.slice('/sdk/'.length);
    let body: Buffer | undefined;
    if (rest === files.tarballName) {
      ctx.type = 'application/gzip';
      body = files.tarball;
    } else if (rest.startsWith(`${files.version}/`) && files.esm.has(rest.slice(files.version.length + 1))) {
      ctx.type = 'text/javascript; charset=utf-8';
      ctx.set('Access-Control-Allow-Origin', '*');
      body = files.esm.get(rest.slice(files.version.length + 1));
    }
    if (!body) return next();
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = body;
  };
}
