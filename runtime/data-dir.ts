import fs from 'node:fs';
import path from 'node:path';

/**
 * The local data dir (`.data/`: master.key, the demo login, logs, Postgres, `temporal.db`,
 * emulator state) is its owner's alone. `npm start` calls this first: the directory is created
 * 0700 and a tree an earlier release left 0755/0644 is fixed, every directory 0700 and every
 * regular file 0600 (a mode given at creation applies only to new files). What is written later is
 * created 0600 where it is created (logs, keys, emulator state; the dev server's `temporal.db` under
 * an owner-only umask; Postgres makes its own 0600). Symlinks are not followed. Run as root, the
 * embedded Postgres runs as the `postgres` OS user, which must reach its own directory inside: the
 * top directory is then 0711 (entered by name, listed by nobody).
 */
export function makeDataDirPrivate(dir: string, opts: { root?: boolean } = {}): void {
  const root = opts.root ?? process.getuid?.() === 0;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  setMode(dir, root ? 0o711 : 0o700);
  fixTree(dir);
}

function fixTree(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      setMode(at, 0o700);
      fixTree(at);
    } else if (entry.isFile()) setMode(at, 0o600);
    // Symlinks, sockets and pipes are left alone: a link's target is not ours to change.
  }
}

function setMode(at: string, mode: number): void {
  try {
    if ((fs.lstatSync(at).mode & 0o7777) !== mode) fs.chmodSync(at, mode);
  } catch (err) {
    // Gone meanwhile (a log rotated, a temp file renamed): nothing left to fix.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
