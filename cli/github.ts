/**
 * GitHub Actions workflow commands (annotations), used when GITHUB_ACTIONS=true: a change shows
 * on the pull request's file view at its line, an error fails loudly at its line.
 */

import path from 'node:path';

export const underGitHubActions = (env: NodeJS.ProcessEnv = process.env) => env.GITHUB_ACTIONS === 'true';

/**
 * A file as GitHub names it in annotations: relative to the workspace (the repository root),
 * wherever the command ran from (`cd billing && npx billing catalogue plan -f ../catalogue.yaml`).
 */
export function workspacePath(file: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const root = env.GITHUB_WORKSPACE || cwd;
  const relative = path.relative(root, path.resolve(cwd, file));
  return relative.startsWith('..') ? file : relative.split(path.sep).join('/');
}

const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

export function annotation(
  level: 'notice' | 'warning' | 'error',
  message: string,
  where: { file?: string; line?: number; title?: string } = {},
  at: { env: NodeJS.ProcessEnv; cwd: string } = { env: process.env, cwd: process.cwd() },
): string {
  const props = [
    where.file ? `file=${escapeProperty(workspacePath(where.file, at.env, at.cwd))}` : '',
    where.line ? `line=${where.line}` : '',
    `title=${escapeProperty(where.title ?? 'billing')}`,
  ].filter(Boolean);
  return `::${level} ${props.join(',')}::${escapeData(message)}`;
}
