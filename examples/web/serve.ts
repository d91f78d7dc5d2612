import fs from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Serves the example web app: its page, the built SDK (sdk/dist) at /sdk/, and
 * /config.json (API host, publishable key, app user, plan) so the page needs no build.
 */
export interface ExampleConfig {
  backend: string;
  publishableKey: string;
  appUserId: string;
  planId: string;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const sdkDist = path.resolve(here, '../../sdk/dist');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
};

export async function startExampleServer(config: ExampleConfig, port = 0, host = '127.0.0.1') {
  await fs.access(path.join(sdkDist, 'index.js')).catch(() => {
    throw new Error('sdk/dist is missing: run `npm run sdk:build` first.');
  });
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    let file: string | null = null;
    if (url.pathname === '/config.json') {
      res.writeHead(200, { 'content-type': TYPES['.json'], 'cache-control': 'no-store' });
      return res.end(JSON.stringify(config));
    }
    if (url.pathname === '/' || url.pathname === '/index.html') file = path.join(here, 'index.html');
    else if (url.pathname === '/app.js') file = path.join(here, 'app.js');
    else if (/^\/sdk\/[\w-]+\.js$/.test(url.pathname)) file = path.join(sdkDist, url.pathname.slice('/sdk/'.length));
    if (!file) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    try {
      const body = await fs.readFile(file);
      res.writeHead(200, {
        'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
      });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const { port: bound } = server.address() as net.AddressInfo;
  return {
    url: `http://${host}:${bound}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
