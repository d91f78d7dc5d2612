/**
 * An operation's refusal as one form message. The API names the field before each problem
 * ("name: …") and lists them all, since its caller has no form; a form shows its fields, so it
 * gets the first problem's own sentence, as the pages said before they ran operations.
 */
export function formMessage(refusal: { error: string; param?: string }): string {
  const first = refusal.error.split('; ')[0];
  return refusal.param && first.startsWith(`${refusal.param}: `) ? first.slice(refusal.param.length + 2) : first;
}
