import type Koa from 'koa';
import { readRawBody } from '../json-body';
import { csrfMatches, csrfSecret } from './session';

export const MAX_FORM_BYTES = 64 * 1024;

export class CsrfRefused extends Error {
  constructor() {
    super('The form was missing its security token or it did not match. Reload the page and try again.');
  }
}

/**
 * An urlencoded form, refused unless it carries this session's CSRF token. `maxBytes`: a form
 * that carries a file's text (the import page) may be larger than the default.
 */
export async function readForm(ctx: Koa.Context, maxBytes = MAX_FORM_BYTES): Promise<URLSearchParams> {
  const raw = await readRawBody(ctx, maxBytes);
  const form = new URLSearchParams(ctx.is('application/x-www-form-urlencoded') ? raw.toString('utf8') : '');
  const secret = csrfSecret(ctx);
  if (!secret || !csrfMatches(secret, form.get('_csrf'))) throw new CsrfRefused();
  return form;
}
