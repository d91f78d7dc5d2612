import zlib from 'node:zlib';

export interface TarEntry {
  /** The path inside the archive (under 100 bytes: no long-name extension is written). */
  path: string;
  body: Buffer;
}

/**
 * A gzipped ustar archive of regular files, byte-identical for the same entries (a fixed mtime,
 * no owner): what `npm install <url>` accepts as a package tarball.
 */
export function tarGz(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    blocks.push(header(e.path, e.body.length), e.body, Buffer.alloc((512 - (e.body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return zlib.gzipSync(Buffer.concat(blocks), { level: 9 });
}

function header(name: string, size: number): Buffer {
  if (Buffer.byteLength(name) >= 100) throw new Error(`tar: path too long: ${name}`);
  const h = Buffer.alloc(512);
  const put = (value: string, offset: number, length: number) => h.write(value, offset, length, 'utf8');
  const octal = (n: number, length: number) => n.toString(8).padStart(length - 1, '0') + '\0';
  put(name, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  // npm's own `npm pack` dates every entry 1985-10-26: a fixed time keeps the archive reproducible.
  put(octal(499162500, 12), 136, 12);
  put('        ', 148, 8);
  put('0', 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8);
  return h;
}
