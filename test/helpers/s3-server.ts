import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { toolPaths } from '../../runtime/config';
import { until } from './until';

/**
 * SeaweedFS (Apache-2.0), an S3-compatible object store people run, as `weed mini`: built once
 * into the per-user tools cache by .ci/run (or `WEED_BIN`), started only by the tests that need it,
 * with a data directory of its own, ports that were free, one bucket and one access key, and no
 * telemetry. Not a mock: the real server answering the real S3 API.
 */
export const WEED_BIN = process.env.WEED_BIN || path.join(toolPaths().toolCacheDir, 'weed');

export function weedAvailable(): boolean {
  try {
    fs.accessSync(WEED_BIN, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface S3Server {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  process: ChildProcess;
  log: () => string;
  close: () => Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Starts `weed mini` and waits until its S3 port answers. */
export async function startS3Server(timeoutMs = 60_000): Promise<S3Server> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'billing-s3-'));
  const accessKeyId = `AK${crypto.randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = crypto.randomBytes(24).toString('base64url');
  const bucket = `exports-${crypto.randomBytes(4).toString('hex')}`;
  const config = path.join(dir, 's3.json');
  await fs.promises.writeFile(
    config,
    JSON.stringify({
      identities: [
        {
          name: 'tests',
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
  );
  const ports: Record<string, number> = {};
  for (const name of ['master', 'volume', 'filer', 's3', 'master.grpc', 'volume.grpc', 'filer.grpc', 's3.grpc'])
    ports[name] = await freePort();
  const data = path.join(dir, 'data');
  await fs.promises.mkdir(data);
  const child = spawn(
    WEED_BIN,
    [
      'mini',
      `-dir=${data}`,
      '-ip=127.0.0.1',
      '-ip.bind=127.0.0.1',
      `-master.port=${ports.master}`,
      `-master.port.grpc=${ports['master.grpc']}`,
      `-volume.port=${ports.volume}`,
      `-volume.port.grpc=${ports['volume.grpc']}`,
      `-filer.port=${ports.filer}`,
      `-filer.port.grpc=${ports['filer.grpc']}`,
      `-s3.port=${ports.s3}`,
      `-s3.port.grpc=${ports['s3.grpc']}`,
      '-s3.port.iceberg=0',
      '-s3.port.lance=0',
      '-webdav=false',
      '-admin.ui=false',
      '-master.telemetry=false',
      `-s3.config=${config}`,
      `-bucket=${bucket}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const endpoint = `http://127.0.0.1:${ports.s3}`;
  const close = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited;
    }
    await fs.promises.rm(dir, { recursive: true, force: true });
  };
  // Ready when the bucket made at start answers a signed-less HEAD with anything but a refused connection.
  const EXITED = -1;
  const status = await until(
    `weed mini on ${endpoint}`,
    async () =>
      child.exitCode !== null
        ? EXITED
        : fetch(`${endpoint}/${bucket}`, { method: 'HEAD' }).then(
            (r) => r.status,
            () => 0,
          ),
    (s) => s === EXITED || s === 403 || s === 200,
    timeoutMs,
  ).catch(async (err: Error) => {
    await close();
    throw new Error(`${err.message}:\n${output.slice(-4000)}`);
  });
  if (status === EXITED) throw new Error(`weed mini exited with ${child.exitCode}:\n${output.slice(-4000)}`);
  return {
    endpoint,
    bucket,
    accessKeyId,
    secretAccessKey,
    region: 'us-east-1',
    process: child,
    log: () => output,
    close,
  };
}
