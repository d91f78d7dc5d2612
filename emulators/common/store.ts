import fs from 'node:fs';
import path from 'node:path';
import type { EmulatorStore } from './types';

/** In-memory object store for one emulator, written to `file` (debounced) when given. */
export function createStore(file?: string): EmulatorStore {
  let kinds: Record<string, Record<string, unknown>[]> = {};
  if (file && fs.existsSync(file)) {
    try {
      kinds = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      kinds = {};
    }
  }
  let timer: NodeJS.Timeout | undefined;
  const write = () => {
    timer = undefined;
    if (!file) return;
    // Buyers' emails and tokens: the owner's alone (the data dir's rule, runtime/data-dir.ts).
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(store.kinds), { mode: 0o600 });
    fs.renameSync(tmp, file);
  };
  const store: EmulatorStore = {
    get kinds() {
      return kinds;
    },
    list(kind) {
      return (kinds[kind] ??= []);
    },
    insert(kind, obj) {
      store.list(kind).push(obj);
      store.save();
      return obj;
    },
    find(kind, pred) {
      return store.list(kind).find(pred);
    },
    save() {
      if (!file || timer) return;
      timer = setTimeout(write, 50);
      timer.unref();
    },
    flush() {
      if (!timer) return;
      clearTimeout(timer);
      write();
    },
  };
  // Only a store written to a file has anything to flush; in-memory ones (the tests', many per
  // process) add no listener.
  if (file) process.once('exit', () => store.flush());
  return store;
}
