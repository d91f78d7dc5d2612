import fs from 'node:fs';

/**
 * Replace (or append) one bench's generated block in bench/RESULTS.md, between
 * `<!-- <script>: generated from here -->` and `<!-- <script>: generated up to here -->`, under
 * `heading`. Text outside the block is left as it is.
 */
export function writeGeneratedBlock(file: string, script: string, heading: string, body: string): void {
  const begin = `<!-- ${script}: generated from here -->`;
  const end = `<!-- ${script}: generated up to here -->`;
  const block = `${begin}\n${body.trim()}\n${end}`;
  let text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmark results\n';
  if (text.includes(begin) && text.includes(end))
    text = text.slice(0, text.indexOf(begin)) + block + text.slice(text.indexOf(end) + end.length);
  else text = `${text.replace(/\s*$/, '')}\n\n${heading}\n\n${block}\n`;
  fs.writeFileSync(file, text);
}
