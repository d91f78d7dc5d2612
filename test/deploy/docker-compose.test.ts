import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../runtime/config';

/** `ports:` entries per service, read line by line (the file keeps them in one flow list each). */
function publishedPorts(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  let service = '';
  for (const line of fs.readFileSync(path.join(ROOT_DIR, 'docker-compose.yml'), 'utf8').split('\n')) {
    const svc = /^ {2}([\w-]+):\s*$/.exec(line);
    if (svc) service = svc[1];
    const ports = /^ {4}ports:\s*\[(.*)\]/.exec(line);
    if (ports) out[service] = [...ports[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  }
  return out;
}

describe('docker-compose publishes nothing unauthenticated beyond loopback (issue #18, item 7)', () => {
  it('Temporal frontend, Temporal UI and the emulators are bound to 127.0.0.1', () => {
    const ports = publishedPorts();
    for (const svc of ['temporal', 'temporal-ui', 'emulators']) {
      expect(ports[svc], svc).toBeDefined();
      for (const p of ports[svc]) expect(p, `${svc} publishes ${p}`).toMatch(/^127\.0\.0\.1:/);
    }
    expect(ports.temporal).toContain('127.0.0.1:7233:7233');
    expect(ports['temporal-ui']).toContain('127.0.0.1:8080:8080');
  });

  it('the api listens beyond loopback inside its container, so its published ports reach it', () => {
    const text = fs.readFileSync(path.join(ROOT_DIR, 'docker-compose.yml'), 'utf8');
    const api = text.slice(text.indexOf('\n  api:'));
    expect(api).toMatch(/\n {6}BIND_HOST: 0\.0\.0\.0\n/);
    expect(publishedPorts().api).toEqual(['4000:4000', '4001:4001', '4002:4002']);
  });
});
