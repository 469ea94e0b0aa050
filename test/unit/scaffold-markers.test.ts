import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { SCAFFOLD_MARKER_PREFIX, ScaffoldMarkers } from '../../src/scaffold/markers.js';
import { TEMPLATES_ROOT } from '../../src/scaffold/render.js';

/** Every marker line the templates write (a line that is only a scaffold marker), with where. */
function templateMarkerLines(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const entry of readdirSync(TEMPLATES_ROOT, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.hbs')) continue;
    const file = join(entry.parentPath, entry.name);
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const trimmed = line.trim();
      if (!trimmed.includes(`+${SCAFFOLD_MARKER_PREFIX}`)) continue;
      found.set(trimmed, [...(found.get(trimmed) ?? []), relative(TEMPLATES_ROOT, file)]);
    }
  }
  return found;
}

test('every scaffold marker a template writes is in ScaffoldMarkers, and every one of those is written', () => {
  const known = new Set<string>(Object.values(ScaffoldMarkers));
  const written = templateMarkerLines();
  const unknown = [...written]
    .filter(([line]) => !known.has(line))
    .map(([line, files]) => `${line} (${files.join(', ')})`);
  assert.deepEqual(unknown, [], 'templates write markers that src/scaffold/markers.ts does not list');
  const unwritten = [...known].filter((line) => !written.has(line));
  assert.deepEqual(unwritten, [], 'src/scaffold/markers.ts lists markers no template writes');
});
