import path from 'node:path';
import ts from 'typescript';

/** A tsconfig file's files and options, as tsc reads them (a path relative to the checkout's root). */
export function readTsconfig(root: string, file: string): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(root, file),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error(`${file} could not be read`);
  return parsed;
}
