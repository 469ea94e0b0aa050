import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { UsageError } from '../../src/errors.js';
import { pluralize, validateDerivedPlural } from '../../src/scaffold/names.js';
import { pluralizeKind } from '../../src/scaffold/plural.js';

// Both files are produced by scripts/plural-golden.sh from gobuffalo/flect v1.0.3
// (the version kubebuilder v4 pins); this test never edits them.
const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/plurals/', import.meta.url));
const MIN_GOLDEN_ROWS = 500;

interface GoldenRow {
  line: number;
  kind: string;
  plural: string;
}

function readGolden(): GoldenRow[] {
  const text = readFileSync(`${FIXTURES}golden.tsv`, 'utf8');
  assert.ok(text.endsWith('\n'), 'golden.tsv ends with a newline, as the script writes it');
  return text
    .slice(0, -1)
    .split('\n')
    .map((row, index) => {
      const fields = row.split('\t');
      assert.equal(fields.length, 2, `golden.tsv:${index + 1} is "kind<TAB>plural": ${JSON.stringify(row)}`);
      return { line: index + 1, kind: fields[0]!, plural: fields[1]! };
    });
}

function readKinds(): string[] {
  return readFileSync(`${FIXTURES}kinds.txt`, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

test(`the plural golden has at least ${MIN_GOLDEN_ROWS} kinds, one row for each line of kinds.txt in order`, () => {
  const golden = readGolden();
  assert.ok(golden.length >= MIN_GOLDEN_ROWS, `golden.tsv has ${golden.length} rows`);
  // A kinds.txt edited without rerunning scripts/plural-golden.sh would leave new
  // kinds untested; the golden must be a row-for-row image of the list.
  assert.deepEqual(
    golden.map((row) => row.kind),
    readKinds(),
  );
});

test('every kind in the golden pluralizes exactly as flect does', () => {
  const mismatches = readGolden()
    .filter((row) => pluralizeKind(row.kind) !== row.plural)
    .map((row) => `golden.tsv:${row.line} ${row.kind}: flect "${row.plural}", ours "${pluralizeKind(row.kind)}"`);
  assert.deepEqual(mismatches, []);
});

test('the scaffolder uses the flect port (names.pluralize agrees with every golden row)', () => {
  for (const row of readGolden()) assert.equal(pluralize(row.kind), row.plural, `golden.tsv:${row.line} ${row.kind}`);
});

test('the examples of issue 11 come out as kubebuilder names them', () => {
  const expected: Record<string, string> = {
    Redis: 'redis',
    Postgres: 'postgres',
    Endpoints: 'endpoints',
    Settings: 'settings',
    Credentials: 'credentials',
    Metrics: 'metrics',
    Cactus: 'cacti',
    Feedback: 'feedbacks',
    Medium: 'media',
    Memcached: 'memcacheds',
    NetworkPolicy: 'networkpolicies',
  };
  for (const [kind, plural] of Object.entries(expected)) assert.equal(pluralizeKind(kind), plural, kind);
});

test('the kind is lowercased as a whole before pluralizing, so case in the kind never matters', () => {
  // flect would split "SalesPerson" into words; kubebuilder lowercases first, so it sees "salesperson".
  assert.equal(pluralizeKind('SalesPerson'), pluralizeKind('Salesperson'));
  assert.equal(pluralizeKind('APIKey'), 'apikeys');
  assert.equal(pluralizeKind('CronJob'), pluralizeKind('Cronjob'));
});

test('a derived plural that cannot name a resource is refused with the fix; a usable one passes', () => {
  const longest = `K${'a'.repeat(61)}`; // 62 characters: its plural has 63
  assert.equal(pluralizeKind(longest).length, 63);
  assert.doesNotThrow(() => validateDerivedPlural(longest));
  assert.doesNotThrow(() => validateDerivedPlural('Memcached'));
  assert.doesNotThrow(() => validateDerivedPlural('Redis'));

  const tooLong = `K${'a'.repeat(62)}`;
  assert.throws(
    () => validateDerivedPlural(tooLong),
    (error: unknown) =>
      error instanceof UsageError &&
      /of 64 characters, longer than the 63/.test(error.problem) &&
      /--plural.*shorter --kind/.test(error.fix),
  );
  // A consonant + "y" becomes "ies", two letters more: a 62-character kind is already too long.
  assert.throws(() => validateDerivedPlural(`K${'a'.repeat(59)}ly`), /of 64 characters/);

  for (const [kind, suggestion] of [
    ['Dns', 'dnses'],
    ['Https', 'httpses'],
    ['Ids', 'idses'],
  ] as const) {
    assert.throws(
      () => validateDerivedPlural(kind),
      (error: unknown) =>
        error instanceof UsageError &&
        error.problem.includes(`"${pluralizeKind(kind)}"`) &&
        error.fix === `pass a lowercase --plural such as --plural ${suggestion}`,
      kind,
    );
  }
});

test('every golden kind whose flect plural is not a resource name is refused by validateDerivedPlural, and only those', () => {
  for (const row of readGolden()) {
    const usable = /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(row.plural) && row.plural.length <= 63;
    if (usable) assert.doesNotThrow(() => validateDerivedPlural(row.kind), row.kind);
    else assert.throws(() => validateDerivedPlural(row.kind), UsageError, row.kind);
  }
});
