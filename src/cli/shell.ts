/**
 * Single-quotes a value for a POSIX shell when it needs it, so a line the CLI
 * prints for `eval` (`export KUBECONFIG=...`) survives spaces, quotes and `$`
 * in paths. Plain paths are left as they are.
 */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:@%+=-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
