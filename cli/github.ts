/**
 * GitHub Actions workflow commands (annotations), used when GITHUB_ACTIONS=true: a change shows
 * on the pull request's file view at its line, an error fails loudly at its line.
 */

export const underGitHubActions = (env: NodeJS.ProcessEnv = process.env) => env.GITHUB_ACTIONS === 'true';

const escapeData = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
const escapeProperty = (s: string) => escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');

export function annotation(
  level: 'notice' | 'warning' | 'error',
  message: string,
  where: { file?: string; line?: number; title?: string } = {},
): string {
  const props = [
    where.file ? `file=${escapeProperty(where.file)}` : '',
    where.line ? `line=${where.line}` : '',
    `title=${escapeProperty(where.title ?? 'billing')}`,
  ].filter(Boolean);
  return `::${level} ${props.join(',')}::${escapeData(message)}`;
}
