/**
 * A `node --test` reporter that writes one JSON line per test file: its path,
 * its wall time (from the runner starting the file's process to the process
 * ending, module loading and control planes included) and its test counts.
 * scripts/test.sh writes it beside the spec output; scripts/ci-time.sh sorts it.
 * Nothing else is reported here, so the spec reporter stays the one humans read.
 */
import { basename } from 'node:path';

type Event = { type: string; data: Record<string, unknown> };
type FileTimes = { file: string; wallMs?: number; tests?: number; failed?: number };

export default async function* timesReporter(source: AsyncIterable<Event>): AsyncGenerator<string> {
  const files = new Map<string, FileTimes>();
  const entry = (file: string): FileTimes => {
    let times = files.get(file);
    if (!times) files.set(file, (times = { file }));
    return times;
  };
  // A file's summary (its counts) may come before or after the runner's test for
  // the file (its wall time) when files run side by side: a line is written once
  // both are known, and at the end for a file that lacks one (it crashed).
  for await (const { type, data } of source) {
    const file = typeof data.file === 'string' ? data.file : undefined;
    if (!file) continue;
    // The runner's own test for a file is named after the path it was given and,
    // unlike the file's tests, has no entryFile: its duration is the file's process, end to end.
    if (
      type === 'test:complete' &&
      data.nesting === 0 &&
      !('entryFile' in data) &&
      basename(String(data.name)) === basename(file)
    ) {
      entry(file).wallMs = Math.round((data.details as { duration_ms: number }).duration_ms);
    } else if (type === 'test:summary') {
      const counts = data.counts as { tests: number; failed: number };
      Object.assign(entry(file), { tests: counts.tests, failed: counts.failed });
    } else continue;
    const times = entry(file);
    if (times.wallMs !== undefined && times.tests !== undefined) {
      yield `${JSON.stringify(times)}\n`;
      files.delete(file);
    }
  }
  for (const times of files.values()) yield `${JSON.stringify(times)}\n`;
}
