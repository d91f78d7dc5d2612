import { execFile, type ExecFileOptions } from 'node:child_process';

/** What a command answered: its exit code and everything it wrote. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Streams that keep what a command run in this process writes; `result` pairs them with its exit code. */
export function capturedStreams() {
  let stdout = '';
  let stderr = '';
  return {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    result: (code: number): CliResult => ({ code, stdout, stderr }),
  };
}

/** A command as a process of its own; a non-zero exit is an answer, not a throw. */
export function processResult(file: string, args: string[], options: ExecFileOptions): Promise<CliResult> {
  return new Promise((resolve) =>
    execFile(file, args, { ...options, encoding: 'utf8' }, (e, stdout, stderr) =>
      resolve({ code: e ? Number(e.code ?? 1) : 0, stdout, stderr }),
    ),
  );
}
