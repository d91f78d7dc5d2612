import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Stripe's own stripe-mock (github.com/stripe/stripe-mock), which validates every request
 * against Stripe's OpenAPI and answers with fixtures. CI builds it into the tools cache;
 * STRIPE_MOCK_BIN points elsewhere.
 */
export const STRIPE_MOCK_BIN =
  process.env.STRIPE_MOCK_BIN || path.join(os.homedir(), '.cache', 'billing-tools', 'bin', 'stripe-mock');

export function stripeMockAvailable(): boolean {
  try {
    fs.accessSync(STRIPE_MOCK_BIN, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface StripeMock {
  url: string;
  port: number;
  /** Everything stripe-mock printed (its request log names validation failures). */
  log: () => string;
  close: () => Promise<void>;
}

/** Start stripe-mock on a port the OS picks (`-http-port 0`) and wait until it listens. */
export async function startStripeMock(timeoutMs = 15_000): Promise<StripeMock> {
  const child: ChildProcess = spawn(STRIPE_MOCK_BIN, ['-http-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`stripe-mock did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const m = /Listening for HTTP at address: .*:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`stripe-mock exited with ${code}:\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    log: () => output,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
