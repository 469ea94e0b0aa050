/**
 * Our `bundle validate` against operator-framework/api v0.34: for every
 * bundle variant in broken-bundles.ts, the exit code and the error and
 * warning lines must be the ones the api's validators give, as recorded by
 * scripts/olm-verdicts.sh in test/fixtures/bundles/olm-verdicts.json.
 *
 * Two rule sets are ours on top of the reference, each allowed only on the
 * fixtures listed for it (so a new disagreement cannot hide behind them):
 *  - operator-registry's format check, which operator-sdk runs too but the
 *    reference does not build (it pulls in containerd);
 *  - OLM's install-time webhook rules, which operator-sdk does not check and
 *    OLM enforces when it installs the CSV.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { BUNDLE_VARIANTS, materializeVariant } from './broken-bundles.js';

const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');
const CLI = join(REPO_ROOT, 'bin', 'ts-operator-sdk.js');
const GOLDEN = join(REPO_ROOT, 'test', 'fixtures', 'bundles', 'olm-verdicts.json');

interface Verdict {
  selector: string;
  optionalValues: string;
  passed: boolean;
  errors: string[];
  warnings: string[];
}

const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as { reference: string; verdicts: Record<string, Verdict> };

/**
 * Lines that come from rules the reference does not run, and the only fixtures
 * allowed to have them. The format check is an error (operator-sdk runs it, the
 * reference cannot build it); OLM's install-time webhook rules are warnings, so
 * the exit code is the reference's.
 */
const OUR_EXTRA_RULES = [
  {
    rule: "operator-registry's format check",
    level: 'error',
    line: /^error validating format in bundle: Bundle validation errors: /,
    fixtures: ['format-missing-package-annotation', 'format-wrong-mediatype', 'format-empty-channels'],
  },
  {
    rule: "OLM's install-time webhook rules",
    level: 'warning',
    line: /^Warning: Value : \([^)]+\) webhookdefinition "/,
    fixtures: [
      'webhook-unknown-deployment',
      'webhook-unsupported-type',
      'webhook-conversion-unowned-crd',
      'webhook-conversion-preserve-unknown-fields',
      'webhook-rule-all-groups',
      'webhook-rule-olm-group',
      'webhook-rule-webhook-configurations',
    ],
  },
] as const;

/**
 * Where our text differs from the api's on purpose, both sides lose the part:
 *  - k8s field errors embed the CRD's versions list, which Go prints as its
 *    internal struct dump (`[{v1 true true ...}]`) and we print as JSON.
 * (A *bool bad value, which Go prints as a memory address, is printed as its
 * value by the reference itself, so the golden is stable.)
 */
function normalize(message: string): string {
  return message.replace(
    /^(Error: Field spec\.versions, Value ).*(: spec\.versions: Invalid value: ).*(: (?:must have exactly one version marked as storage version|per-version \w+ may not all be set to identical values \(top-level \w+ should be used instead\)))$/s,
    '$1<versions>$2<versions>$3',
  );
}

interface OurVerdict {
  code: number | null;
  fatal?: string;
  errors: string[];
  warnings: string[];
}

const workRoot = mkdtempSync(join(tmpdir(), 'bundle-verdicts-'));
after(() => rmSync(workRoot, { recursive: true, force: true }));

function ourVerdict(name: string, verdict: Verdict): OurVerdict {
  const variant = BUNDLE_VARIANTS.find((candidate) => candidate.name === name)!;
  const caseDir = join(workRoot, name);
  materializeVariant(variant, join(caseDir, 'bundle'));
  const args = ['bundle', 'validate', 'bundle', '-o', 'json-alpha1'];
  if (verdict.selector) args.push('--select-optional', verdict.selector);
  if (verdict.optionalValues) args.push('--optional-values', verdict.optionalValues);
  const run = spawnSync(process.execPath, [CLI, ...args], {
    cwd: caseDir,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (run.stdout === '') return { code: run.status, fatal: run.stderr, errors: [], warnings: [] };
  const report = JSON.parse(run.stdout) as { passed: boolean; outputs: { type: string; message: string }[] | null };
  const outputs = report.outputs ?? [];
  assert.equal(report.passed, run.status === 0, `${name}: "passed" agrees with the exit code`);
  return {
    code: run.status,
    errors: outputs.filter((output) => output.type === 'error').map((output) => output.message),
    warnings: outputs.filter((output) => output.type === 'warning').map((output) => output.message),
  };
}

const sorted = (lines: readonly string[]): string[] => lines.map(normalize).sort();

describe('bundle validate agrees with operator-framework/api v0.34', () => {
  test('the golden covers exactly the variants of broken-bundles.ts (regenerate with scripts/olm-verdicts.sh)', () => {
    assert.match(golden.reference, /operator-framework\/api v0\.34\./);
    assert.deepEqual(Object.keys(golden.verdicts).sort(), BUNDLE_VARIANTS.map((variant) => variant.name).sort());
  });

  for (const [name, verdict] of Object.entries(golden.verdicts)) {
    test(name, () => {
      const ours = ourVerdict(name, verdict);
      const loadFailure = verdict.errors.find((line) => line.startsWith('load: '));
      if (loadFailure) {
        // The api could not load the bundle; we must stop too, with one fatal line.
        assert.equal(ours.code, 1, `${name}: ${loadFailure}`);
        assert.match(ours.fatal ?? '', /^time="[^"]+" level=fatal msg=.+\n$/);
        return;
      }
      assert.equal(ours.fatal, undefined, `${name}: the api loads this bundle, so must we`);
      const isExtra = (level: string) => (line: string) =>
        OUR_EXTRA_RULES.some((rule) => rule.level === level && rule.line.test(line));
      const extraErrors = ours.errors.filter(isExtra('error'));
      const extraWarnings = ours.warnings.filter(isExtra('warning'));
      const extras = [...extraErrors, ...extraWarnings];
      for (const line of extras) {
        const rule = OUR_EXTRA_RULES.find((candidate) => candidate.line.test(line))!;
        assert.ok(
          (rule.fixtures as readonly string[]).includes(name),
          `${name}: unexpected line from ${rule.rule}: ${line}`,
        );
      }
      for (const rule of OUR_EXTRA_RULES) {
        if ((rule.fixtures as readonly string[]).includes(name))
          assert.ok(
            extras.some((line) => rule.line.test(line)),
            `${name}: expected a line from ${rule.rule}`,
          );
      }
      const apiErrors = ours.errors.filter((line) => !extraErrors.includes(line));
      const apiWarnings = ours.warnings.filter((line) => !extraWarnings.includes(line));
      assert.deepEqual(sorted(apiErrors), sorted(verdict.errors), `${name}: error lines`);
      assert.deepEqual(sorted(apiWarnings), sorted(verdict.warnings), `${name}: warning lines`);
      assert.equal(ours.code, verdict.errors.length > 0 || extraErrors.length > 0 ? 1 : 0, `${name}: exit code`);
    });
  }
});
