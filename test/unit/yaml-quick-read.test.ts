/**
 * The quick YAML reader (js-yaml) must read manifests exactly as the yaml
 * library did before it, or hand the input to the yaml library: a value
 * read differently would change a generated bundle without any error.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { parseYamlCarefully, parseYamlDocuments, quickParseYaml } from '../../src/yaml-input.js';

/** What `read` gives for `text`: its documents, or the message it refuses the text with. */
function outcome(read: typeof parseYamlDocuments, text: string): unknown {
  try {
    return read(text, 'sample', syntaxError);
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

const syntaxError = (index: number, reason: string): UsageError =>
  new UsageError(`document ${index + 1}: ${reason}`, 'fix it');

// Scalars whose type differs between YAML 1.1, YAML 1.2 and the two
// libraries' core schemas, keys that are not strings, and the stream forms.
const samples = [
  'a: 1\nb: 0o17\nc: 017\nd: 0x1F\ne: 0b101\nf: 1_000\ng: +12\nh: -0\n',
  'a: 1.5e3\nb: .5\nc: 5.\nd: .inf\ne: -.Inf\nf: .NaN\ng: 9007199254740993\nh: 1:20\n',
  'a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\nc: yes\nd: On\ne: TRUE\nf: tRue\n',
  'a: ~\nb: Null\nc:\nd: NULL\ne: =\nf: <<\n<<: {x: 1}\n',
  '1: a\n1.0: b\ntrue: c\n0x10: d\n.inf: e\n"null": f\n',
  '~: a\n',
  '? : a\n',
  '[1, 2]: a\n',
  '%YAML 1.1\n---\na: yes\n',
  'a: !!float 1\n',
  'a: !!str 1\nb: !!int "3"\n',
  '',
  '---\n---\n',
  '--- 1\n--- "x"\n',
  '# c\n---\na: 1\n...\n',
  "a: \"\\x41\\u00e9\\t\\/\"\nb: 'it''s'\nc: |\n  x\n  y\nd: >-\n  x\n  y\n\n  z\ne: |+\n  x\n\n",
  'a: b\n  c\nd: "multi\n  line"\n',
  'a: &x {b: 1}\nc: *x\n',
  'a: 1\na: 2\n',
  'a: !local x\n',
  '__proto__: {x: 1}\n',
  'a: 1\r\nb: 2\r\n',
];

describe('quick YAML reader', () => {
  it('reads and refuses every sample as the yaml library path does', () => {
    for (const text of samples) {
      assert.deepEqual(outcome(parseYamlDocuments, text), outcome(parseYamlCarefully, text), JSON.stringify(text));
    }
  });

  it('takes the common case itself, and leaves to the yaml library what the two read differently', () => {
    assert.deepEqual(quickParseYaml('apiVersion: v1\nkind: ConfigMap\n---\nkind: Secret\n'), [
      { apiVersion: 'v1', kind: 'ConfigMap' },
      { kind: 'Secret' },
    ]);
    for (const text of ['~: a\n', '%YAML 1.1\n---\na: yes\n', 'a: !!float 1\n', 'a: &x 1\nb: *x\n', 'a: 1\na: 2\n'])
      assert.equal(quickParseYaml(text), undefined, JSON.stringify(text));
  });
});
