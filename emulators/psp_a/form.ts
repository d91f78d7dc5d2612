/**
 * Stripe's request encoding: `application/x-www-form-urlencoded` with bracketed keys
 * (`metadata[sku]=x`, `recurring[interval]=month`, `line_items[0][price]=…`, `expand[]=…`),
 * as stripe-node's stringifyRequestData writes it. Values stay strings; handlers coerce.
 */
export type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormObject = { [key: string]: FormValue };

function decode(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

function splitKey(key: string): string[] | null {
  const first = key.indexOf('[');
  if (first === -1) return [key];
  const parts = [key.slice(0, first)];
  const rest = key.slice(first);
  const re = /\[([^\]]*)\]/g;
  let consumed = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(rest))) {
    if (m.index !== consumed) return null;
    parts.push(m[1]);
    consumed = m.index + m[0].length;
  }
  return consumed === rest.length ? parts : null;
}

/** Objects whose keys are exactly 0..n-1 become arrays (Stripe's `a[0]=…&a[1]=…`). */
function arrayify(v: FormValue): FormValue {
  if (typeof v === 'string' || Array.isArray(v)) return Array.isArray(v) ? v.map(arrayify) : v;
  const keys = Object.keys(v);
  for (const k of keys) v[k] = arrayify(v[k]);
  if (keys.length > 0 && keys.every((k, i) => k === String(i))) return keys.map((k) => v[k]);
  return v;
}

export class FormError extends Error {}

export function parseForm(raw: string): FormObject {
  const root: FormObject = {};
  if (!raw) return root;
  for (const pair of raw.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    const path = splitKey(key);
    if (!path || !path[0]) throw new FormError(`Invalid parameter name: ${key}`);
    let node: { [key: string]: FormValue } = root;
    for (let i = 0; i < path.length; i++) {
      const last = i === path.length - 1;
      let seg = path[i];
      if (seg === '') seg = String(Object.keys(node).length); // `a[]` appends
      if (last) {
        node[seg] = value;
      } else {
        let next = node[seg];
        if (typeof next === 'string' || next === undefined) {
          // `metadata=` followed by `metadata[k]=v`: the nested form wins
          next = {};
          node[seg] = next;
        }
        node = next as { [key: string]: FormValue };
      }
    }
  }
  for (const k of Object.keys(root)) root[k] = arrayify(root[k]);
  return root;
}
