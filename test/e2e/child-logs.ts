import type { Readable } from 'node:stream';

/**
 * Collects a child process's JSON log lines (JSON lines on stderr) as objects, so a
 * test can wait for and inspect what an operator process reported. Lines
 * that are not JSON are kept as `{ msg: line }`.
 */
export function collectJsonLines(
  stream: Readable,
  keep: (line: string) => boolean = () => true,
): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  let buffered = '';
  stream.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!keep(line)) continue;
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ msg: line });
      }
    }
  });
  return lines;
}
