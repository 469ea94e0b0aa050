import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import YAML from 'yaml';
import { sortKeysDeep, yamlInlineString, yamlTextWithoutLibrary, type YamlSchema } from '../../src/yaml-output.js';

// Compiled to dist/test/unit: the sources' fixtures are three levels up.
const fixtures = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));
const options = { indentSeq: false, lineWidth: 0, minContentWidth: 0 } as const;
const library = (value: unknown, schema: YamlSchema): string =>
  YAML.stringify(value, schema === '1.1' ? { ...options, version: '1.1' } : options);

/** Asserts the writer gives the library's bytes for `value`, or gives up; returns whether it wrote. */
function agrees(value: unknown, schema: YamlSchema): boolean {
  const ours = yamlTextWithoutLibrary(value, schema);
  if (ours !== undefined) assert.equal(ours, library(value, schema), `${schema}: ${JSON.stringify(value)}`);
  // The library's default layout, lists indented under their key (the bundle's file record).
  const indented = yamlTextWithoutLibrary(value, schema, { indentSeq: true });
  const expected = YAML.stringify(value, {
    lineWidth: 0,
    minContentWidth: 0,
    ...(schema === '1.1' ? { version: '1.1' } : {}),
  });
  if (indented !== undefined) assert.equal(indented, expected, `${schema}, indentSeq: ${JSON.stringify(value)}`);
  return ours !== undefined;
}

/** Every YAML document under test/fixtures, as plain data. */
function fixtureDocuments(): Array<{ file: string; value: unknown }> {
  const documents: Array<{ file: string; value: unknown }> = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(entry.name)) {
        for (const document of YAML.parseAllDocuments(readFileSync(path, 'utf8'))) {
          const value: unknown = document.toJS();
          if (value && typeof value === 'object' && !Array.isArray(value)) documents.push({ file: path, value });
        }
      }
    }
  };
  walk(fixtures);
  return documents;
}

test('the bundle fixtures come out as the yaml library writes them, and none is left to the library', () => {
  const documents = fixtureDocuments();
  assert.ok(documents.length >= 30, `${documents.length} documents`);
  for (const { file, value } of documents) {
    for (const schema of ['1.1', 'core'] as const) {
      // Sorted as renderYaml writes them, and in their own order.
      assert.ok(agrees(sortKeysDeep(value), schema), `${schema} gave up on ${file}`);
      agrees(value, schema);
    }
  }
});

/** Strings at the edges of what may stay plain, quoted, or become a block. */
const AWKWARD = [
  '',
  ' ',
  'a',
  'a b',
  ' a',
  'a ',
  'a\tb',
  '\ta',
  'a\t',
  'a:b',
  'a: b',
  'a:',
  ':a',
  'a #b',
  'a#b',
  '#a',
  '-',
  '- a',
  '-a',
  '?',
  '? a',
  '?a',
  ',a',
  '[a',
  ']',
  '{a}',
  '&a',
  '*a',
  '!a',
  '|a',
  '>a',
  "'a",
  '"a',
  'a"b',
  "a'b",
  'a"b\'c',
  '%a',
  '@a',
  '`a',
  '---',
  '--- a',
  '...',
  'a---',
  'y',
  'Y',
  'n',
  'N',
  'yes',
  'Yes',
  'YES',
  'no',
  'On',
  'off',
  'OFF',
  'true',
  'True',
  'false',
  'null',
  'Null',
  '~',
  'NULL',
  '0',
  '-1',
  '+1',
  '007',
  '0o7',
  '0b101',
  '0x1F',
  '1_000',
  '1.5',
  '.5',
  '1.',
  '1e3',
  '1.5e-3',
  '.inf',
  '-.Inf',
  '.nan',
  '0.0.1',
  'v0.0.1',
  '1:30',
  '1:30.5',
  '190:20:30',
  '2026-11-27',
  '2026-11-27T21:26:49Z',
  '2026-1-2 3:04:05 +5',
  '2026-11-27t21:26:49.5-03:30',
  '<<',
  '<< a',
  'a\\b',
  'é',
  '日本',
  'https://example.com/a?b=c#d',
  'registry+v1',
  'Basic Install',
  'a\nb',
  'a\nb\n',
  'a\nb\n\n',
  'a\n\nb',
  'a\n  b',
  '\na',
  ' a\nb',
  'a\nb ',
  'a \nb',
  'a\n---\nb',
  'a\n#b',
  'a\n b\n',
  '[\n  {"a": 1}\n]',
  'a\u0085b',
  'a\u2028b',
  'a\u0007b',
  'a\u00a0b',
  'x'.repeat(1030),
  'a\r\nb',
];

test('awkward strings as keys, values and list items: the same bytes as the library, or the library writes them', () => {
  let written = 0;
  for (const s of AWKWARD) {
    for (const schema of ['1.1', 'core'] as const) {
      for (const value of [
        { key: s },
        { [s]: 'v' },
        { [s]: { inner: s } },
        { list: [s, s] },
        { list: [{ a: s, [s]: [s] }] },
        { a: { b: { c: s } }, list: [{ n: 1 }] },
      ]) {
        if (agrees(value, schema)) written++;
      }
    }
  }
  // Most of these are written here, not handed to the library.
  assert.ok(written > AWKWARD.length * 2 * 6 * 0.7, `${written} written`);
});

test('generated strings from an alphabet of YAML syntax agree with the library', () => {
  // A fixed linear congruential sequence: the same strings every run.
  let state = 12345;
  const next = (n: number): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  const alphabet = [
    'a',
    'Z',
    '0',
    '7',
    ' ',
    '\t',
    '\n',
    ':',
    '#',
    '-',
    '?',
    '.',
    '_',
    '+',
    "'",
    '"',
    '{',
    '[',
    ',',
    '!',
    '&',
    '*',
    '%',
    '~',
    'e',
    'x',
    'y',
    'o',
    'n',
    '\\',
  ];
  let written = 0;
  for (let i = 0; i < 4000; i++) {
    let s = '';
    const length = 1 + next(7);
    for (let j = 0; j < length; j++) s += alphabet[next(alphabet.length)];
    if (agrees({ k: s, [s]: [s, { v: s }] }, i % 2 ? '1.1' : 'core')) written++;
  }
  // About 70 % are written here (2,863 of 4,000 on 2026-11-27); the rest need the library's quoting.
  assert.ok(written > 2500, `${written} of 4000 written`);
});

test('numbers, booleans, nulls and empty collections are written as the library writes them', () => {
  for (const schema of ['1.1', 'core'] as const) {
    for (const value of [0, -0, 1, -7, 1.5, 1e21, 1e-7, Number.NaN, Infinity, -Infinity, true, false, null]) {
      assert.ok(agrees({ value, list: [value] }, schema), `${schema}: ${String(value)}`);
    }
    assert.ok(agrees({ map: {}, list: [], items: [{}, []] }, schema), `${schema}: empty collections`);
  }
});

test('gives up on what the library writes its own way: shared objects, lists in lists, an empty mapping, non-plain values', () => {
  const shared = { a: 1 };
  const sharedEmpty = {};
  for (const value of [
    { a: shared, b: shared },
    { a: sharedEmpty, b: sharedEmpty },
    { list: [[1]] },
    {},
    { when: new Date(0) },
    { big: 1n },
    { list: [undefined] },
    [1],
    'text',
  ]) {
    assert.equal(
      yamlTextWithoutLibrary(value, '1.1'),
      undefined,
      JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)),
    );
  }
});

test('a single scalar agrees with the library where it writes one', () => {
  for (const s of AWKWARD) {
    for (const schema of ['1.1', 'core'] as const) {
      const ours = yamlInlineString(s, schema);
      if (ours !== undefined) assert.equal(ours, library(s, schema).trimEnd(), JSON.stringify(s));
    }
  }
});
