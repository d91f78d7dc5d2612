/** Provider payloads nest a dozen levels at most; a body past this is refused before anything parses or walks it. */
export const MAX_WEBHOOK_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * How deep a JSON text nests, read from its bytes in one pass without recursion (brackets inside
 * strings do not count). Not a validator: malformed text is left to the parser that follows.
 */
export function jsonNestingDepth(raw: Buffer): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_ARRAY || b === OPEN_OBJECT) max = Math.max(max, ++depth);
    else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) depth--;
  }
  return max;
}
