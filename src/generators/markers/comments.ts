// require, not import: as ESM, Node first scans typescript's 9 MB CommonJS file for module syntax (~0.25 s).
import ts = require('typescript');
import { parseMarker, MarkerSyntaxError, type Marker } from './grammar.js';
import { JSDOC_TAG_ALIASES, type MarkerTarget } from './registry.js';
import type { ProblemList } from '../problems.js';

/** The doc comment and markers written above one declaration. */
export interface Annotations {
  /** Doc text with markers and tags removed, lines kept as controller-gen keeps them. */
  description: string;
  markers: Marker[];
}

/** Marker lines start with `+` and a letter; `+ 1` in prose is not a marker. */
const MARKER_LINE = /^\+[A-Za-z]/;

/**
 * Reads the comments directly above `node`: JSDoc blocks and `//` lines.
 * Markers come from every leading comment; the description from the closest
 * comment group only, so a file header never becomes a type's description.
 * Problems (unknown or malformed markers, markers in the wrong place) go to `problems`.
 */
export function readAnnotations(
  node: ts.Node,
  target: MarkerTarget,
  displayFile: string,
  problems: ProblemList,
): Annotations {
  const sourceFile = node.getSourceFile();
  const text = sourceFile.getFullText();
  const ranges = ts.getLeadingCommentRanges(text, node.getFullStart()) ?? [];
  const markers: Marker[] = [];
  let descriptionLines: string[] = [];
  let previousEnd = -1;
  const fullStart = node.getFullStart();
  const startLineOfFullStart = sourceFile.getLineAndCharacterOfPosition(fullStart).line;
  const codeBeforeOnLine =
    text.slice(sourceFile.getPositionOfLineAndCharacter(startLineOfFullStart, 0), fullStart).trim() !== '';
  for (const range of ranges) {
    // `a: int32; // note` belongs to `a`, not to the next declaration, though TypeScript lists it as leading trivia of the next one.
    if (codeBeforeOnLine && sourceFile.getLineAndCharacterOfPosition(range.pos).line === startLineOfFullStart) continue;
    const raw = text.slice(range.pos, range.end);
    const startLine = sourceFile.getLineAndCharacterOfPosition(range.pos).line + 1;
    const isJsDoc = raw.startsWith('/**');
    const lines = commentLines(raw, range.kind);
    const prose: string[] = [];
    let tag: { name: string; value: string[]; line: number } | undefined;
    const flushTag = (): void => {
      if (!tag) return;
      const alias = JSDOC_TAG_ALIASES[tag.name];
      if (alias) {
        const value = tag.value.join(' ').trim();
        const body = value === '' ? alias : `${alias}=${value}`;
        addMarker(body, tag.line);
      }
      // Other JSDoc tags (@see, @deprecated, @remarks) are documentation, not schema.
      tag = undefined;
    };
    const addMarker = (body: string, line: number): void => {
      try {
        const marker = parseMarker(body, displayFile, line);
        if (!marker) return;
        if (!marker.definition.targets.includes(target)) {
          problems.add(
            displayFile,
            line,
            `marker +${marker.definition.name} cannot be used on a ${targetName(target)}: it belongs on a ${marker.definition.targets.map(targetName).join(' or ')}`,
          );
          return;
        }
        markers.push(marker);
      } catch (err) {
        if (err instanceof MarkerSyntaxError) problems.add(displayFile, line, err.message);
        else throw err;
      }
    };
    lines.forEach((lineText, index) => {
      const line = startLine + index;
      const trimmed = lineText.trim();
      if (MARKER_LINE.test(trimmed)) {
        flushTag();
        addMarker(trimmed.slice(1), line);
        return;
      }
      const tagMatch = isJsDoc ? /^@([A-Za-z]+)\s*(.*)$/.exec(trimmed) : null;
      if (tagMatch) {
        flushTag();
        tag = { name: tagMatch[1]!, value: [tagMatch[2]!], line };
        return;
      }
      if (tag) tag.value.push(trimmed);
      else prose.push(trimmed);
    });
    flushTag();
    // A blank line between comments starts a new group; `//` lines directly below each other form one.
    const gap = previousEnd < 0 ? '' : text.slice(previousEnd, range.pos);
    const continuesGroup =
      range.kind === ts.SyntaxKind.SingleLineCommentTrivia && previousEnd >= 0 && !/\n\s*\n/.test(gap) && !isJsDoc;
    descriptionLines = continuesGroup ? [...descriptionLines, ...prose] : prose;
    previousEnd = range.end;
  }
  // A blank line between the comment and the declaration detaches the description (as in Go).
  if (previousEnd >= 0 && /\n\s*\n/.test(text.slice(previousEnd, node.getStart(sourceFile)))) descriptionLines = [];
  return { description: tidyDescription(descriptionLines), markers };
}

function targetName(target: MarkerTarget): string {
  switch (target) {
    case 'field':
      return 'field';
    case 'type':
      return 'type declaration';
    case 'package':
      return 'package (groupversion_info.ts)';
    case 'controller':
      return 'controller file';
  }
}

/** Strips comment delimiters and the leading `*` of JSDoc lines. */
function commentLines(raw: string, kind: ts.CommentKind): string[] {
  if (kind === ts.SyntaxKind.SingleLineCommentTrivia) return [raw.replace(/^\/\/\s?/, '')];
  const body = raw.replace(/^\/\*\*?/, '').replace(/\*\/$/, '');
  return body.split('\n').map((l) => l.replace(/^\s*\*(?!\/)\s?/, ''));
}

/** Joins lines like controller-gen: trimmed, newlines kept, leading/trailing and repeated blank lines dropped. */
function tidyDescription(lines: string[]): string {
  const out: string[] = [];
  for (const l of lines) {
    const t = l.trim().replace(/\\(['"])/g, '$1');
    if (t === '' && (out.length === 0 || out[out.length - 1] === '')) continue;
    out.push(t);
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

/** Returns the markers with the given name. */
export function markersNamed(markers: readonly Marker[], name: string): Marker[] {
  return markers.filter((m) => m.definition.name === name);
}

/** Returns the single marker with the given name (the last one wins, as in controller-gen). */
export function markerNamed(markers: readonly Marker[], name: string): Marker | undefined {
  const found = markersNamed(markers, name);
  return found[found.length - 1];
}
