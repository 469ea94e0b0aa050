import { UsageError } from '../errors.js';
import type { VirtualTree } from './tree.js';

/** Code to add to an existing file: fragments placed just above a marker line. */
export interface Inserter {
  path: string;
  /** The marker's line, from ScaffoldMarkers (./markers.ts). */
  marker: string;
  /** Each fragment is one or more lines, without the marker's indentation. */
  fragments: string[];
}

/**
 * Applies inserters to the tree. A fragment already present in the file is
 * not added again, so re-running a command (or `--force`) is safe. A missing
 * marker is an error: the user removed it, and guessing a place would be worse.
 */
export function applyInserters(tree: VirtualTree, inserters: readonly Inserter[]): void {
  for (const inserter of inserters) {
    const content = tree.read(inserter.path);
    if (content === undefined) {
      throw new UsageError(
        `${inserter.path} is missing`,
        `restore it (it holds the marker "${inserter.marker}") and run the command again`,
      );
    }
    const lines = content.split('\n');
    const markerIndex = lines.findIndex((line) => line.trim() === inserter.marker);
    if (markerIndex === -1) {
      throw new UsageError(
        `${inserter.path} has no "${inserter.marker}" marker`,
        'add the marker line back where generated code should go and run the command again',
      );
    }
    const indent = /^\s*/.exec(lines[markerIndex]!)![0];
    const added: string[] = [];
    for (const fragment of inserter.fragments) {
      const indented = fragment.split('\n').map((line) => (line ? indent + line : line));
      if (containsLines(lines, indented)) continue;
      added.push(...indented);
    }
    if (added.length === 0) continue;
    lines.splice(markerIndex, 0, ...added);
    tree.write(inserter.path, lines.join('\n'));
  }
}

function containsLines(haystack: string[], needle: string[]): boolean {
  const trimmed = needle.map((line) => line.trim());
  outer: for (let start = 0; start + needle.length <= haystack.length; start++) {
    for (let offset = 0; offset < needle.length; offset++) {
      if (haystack[start + offset]!.trim() !== trimmed[offset]) continue outer;
    }
    return true;
  }
  return false;
}

/**
 * Turns a commented-out line (`#- ../crd`) into a live one (`- ../crd`), once.
 * Used for the kustomization entries init leaves for later commands.
 */
export function uncommentLine(tree: VirtualTree, path: string, line: string): void {
  const content = tree.read(path);
  if (content === undefined) return;
  const lines = content.split('\n');
  if (lines.some((existing) => existing.trim() === line)) return;
  const index = lines.findIndex((existing) => existing.trim() === `#${line}`);
  if (index === -1) return;
  lines[index] = lines[index]!.replace(`#${line}`, line);
  tree.write(path, lines.join('\n'));
}

/**
 * Uncomments a commented-out block of a kustomization, once: `start` are its
 * first lines without their `#`; the block runs on while lines stay commented
 * YAML (`#- item`, `#key:`, or indented `#  more`), so the whole entry comes
 * back even when only its head is named. Explanatory comments (`# text`) and
 * scaffold markers (`# +kubebuilder:...`) end the block. Nothing happens when the block is already
 * live or absent (the user changed the file).
 */
export function uncommentBlock(tree: VirtualTree, path: string, start: readonly string[]): void {
  const content = tree.read(path);
  if (content === undefined) return;
  const lines = content.split('\n');
  const first = lines.findIndex((line, index) =>
    start.every((wanted, offset) => lines[index + offset] === `#${wanted}`),
  );
  if (first === -1) return;
  let end = first + start.length;
  // Commented YAML continues the block: a list item or key at the margin, or an indented line ("#  patch: |-").
  while (end < lines.length && /^#(- | {2}|[A-Za-z_][\w.-]*:)/.test(lines[end]!)) end++;
  for (let index = first; index < end; index++) lines[index] = lines[index]!.slice(1);
  tree.write(path, lines.join('\n'));
}
