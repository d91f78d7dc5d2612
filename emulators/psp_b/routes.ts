import type Koa from 'koa';
import type { EmulatorStore } from '../common/types';
import type { Caller } from './accounts';
import { notFound } from './respond';

export interface Api {
  store: EmulatorStore;
  publicUrl: () => string;
}

export interface Req {
  ctx: Koa.Context;
  caller: Caller;
  params: string[];
  body: Record<string, unknown>;
}

export interface Route {
  method: 'GET' | 'POST' | 'PATCH';
  path: RegExp;
  handler: (api: Api, req: Req) => void | Promise<void>;
}

export type Stored = Record<string, unknown> & { id: string; _account: string; _mode: string };

/** Objects of one kind visible to the caller: same seller, same environment. */
export function owned(store: EmulatorStore, kind: string, caller: Caller): Stored[] {
  return store.list(kind).filter((o) => o._account === caller.account && o._mode === caller.mode) as Stored[];
}

export function getOwned(store: EmulatorStore, kind: string, caller: Caller, id: string): Stored {
  const found = owned(store, kind, caller).find((o) => o.id === id);
  if (!found) throw notFound(id);
  return found;
}

export const now = () => new Date().toISOString();
