import busboy from 'busboy';
import type Koa from 'koa';
import { ApiError } from '../../operations/errors';
import { CsrfRefused } from './form';
import { csrfMatches, csrfSecret } from './session';

/** Why a form's file was not taken; the page shows it as the form's error. */
export type FileRefusal = 'too_large' | 'not_text' | 'unreadable';

export interface MultipartForm {
  fields: URLSearchParams;
  /** The chosen file's text (UTF-8, a byte-order mark dropped); null when none was chosen or it was refused. */
  file: string | null;
  refused: FileRefusal | null;
}

// Types a browser gives a CSV file (Windows names it after Excel; an unknown extension is octet-stream).
const TEXT_TYPES = new Set(['application/csv', 'application/vnd.ms-excel', 'application/octet-stream']);
// Past the form's bound the rest is read and dropped, so the browser gets the page and not a reset
// connection; past this much more the connection is refused outright.
const DRAIN_FACTOR = 4;

/**
 * A `multipart/form-data` form with at most one file, refused unless it carries this session's
 * CSRF token in its `_csrf` field, as `readForm` does. The token must be the form's first part (the
 * dashboard's forms put it first) and is checked as soon as that part has arrived: a post without
 * it, or with another one, is refused having read that much and no more, not the file behind it.
 * `maxBytes` bounds the whole body and the file alike: a file past it, or one that is not UTF-8
 * text, is answered as `refused`, never a fault, with the fields read before it.
 */
export async function readMultipartForm(ctx: Koa.Context, maxBytes: number): Promise<MultipartForm> {
  const fields = new URLSearchParams();
  let refused: FileRefusal | null = null;
  let fileBytes: Buffer | null = null;
  let fileType = '';
  let failed = false;
  // 'unseen' until the first part has arrived; it decides.
  const csrf = { token: 'unseen' as 'unseen' | 'good' | 'refused' };
  const secret = csrfSecret(ctx);
  const parser = busboy({
    headers: ctx.req.headers,
    limits: { fileSize: maxBytes, files: 1, fields: 20, parts: 25, fieldSize: maxBytes },
  });
  parser.on('field', (name, value) => {
    if (csrf.token === 'unseen')
      csrf.token = name === '_csrf' && !!secret && csrfMatches(secret, value) ? 'good' : 'refused';
    fields.append(name, value);
  });
  parser.on('file', (_name, stream, info) => {
    if (csrf.token === 'unseen') csrf.token = 'refused';
    if (csrf.token === 'refused') return void stream.resume();
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('limit', () => (refused = 'too_large'));
    stream.on('close', () => {
      // A file input left empty is sent as a part with no name and no bytes: no file.
      if (!info.filename && chunks.length === 0) return;
      fileBytes = Buffer.concat(chunks);
      fileType = info.mimeType.toLowerCase();
    });
  });
  const closed = new Promise<void>((resolve) => {
    parser.on('close', resolve);
    parser.on('error', () => {
      failed = true;
      resolve();
    });
  });

  let total = 0;
  // Leaving the loop early must not destroy the request: the refusal is still to be answered on it.
  for await (const chunk of ctx.req.iterator({ destroyOnReturn: false })) {
    total += (chunk as Buffer).length;
    if (total > maxBytes * DRAIN_FACTOR) {
      ctx.req.destroy();
      throw new ApiError(413, 'payload_too_large', `Request body exceeds ${maxBytes} bytes.`);
    }
    if (total > maxBytes) refused = 'too_large';
    if (refused === 'too_large' || failed) continue;
    if (!parser.write(chunk)) await Promise.race([new Promise((r) => parser.once('drain', r)), closed]);
    if (csrf.token === 'refused') {
      // What is left of the body is dropped unread, as Node drops the body of a request refused
      // before it was read, so the connection can carry the answer and the next request.
      ctx.req.resume();
      throw new CsrfRefused();
    }
  }
  if (refused !== 'too_large') {
    parser.end();
    await closed;
  }

  if (csrf.token !== 'good' || !secret || !csrfMatches(secret, fields.get('_csrf'))) throw new CsrfRefused();
  if (refused) return { fields, file: null, refused };
  if (failed) return { fields, file: null, refused: 'unreadable' };
  return { fields, ...textOf(fileBytes, fileType) };
}

function textOf(bytes: Buffer | null, type: string): Pick<MultipartForm, 'file' | 'refused'> {
  if (!bytes) return { file: null, refused: null };
  if (!(type.startsWith('text/') || TEXT_TYPES.has(type))) return { file: null, refused: 'not_text' };
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return text.includes('\0') ? { file: null, refused: 'not_text' } : { file: text, refused: null };
  } catch {
    return { file: null, refused: 'not_text' };
  }
}
