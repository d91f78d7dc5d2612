/** `--name value` from the bench's command line, else the default: every bench reads its options this way. */
export function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
}

/** A numeric option (`--seconds 30`). */
export const numArg = (name: string, dflt: number): number => Number(arg(name, String(dflt)));
