/**
 * The generated project's formatter and linter, for real: a project with
 * every shape `create api` makes (multigroup, a cluster-scoped kind, a kind
 * with two versions, a kind without a group, a 20-character kind, an
 * external kind from a CRD) and `create webhook` makes (all three types, a
 * conversion spoke, a cluster-scoped kind) installs Prettier, ESLint and
 * typescript-eslint from the npm registry and this package from `npm pack`;
 * then
 * - `make lint` passes with no warning, and `make fmt` changes nothing (the
 *   generated files are already formatted);
 * - a planted lint error and a planted formatting error each fail `make
 *   lint`; `make fmt` and `make lint-fix` repair what they can;
 * - the generated lint workflow's `run:` steps, run in order, pass.
 *
 * Run: node --test dist/test/scaffold/lint-format.test.js (after `npm run build`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { childEnv } from '../support/child-env.js';
import { hashTree, installDependencies, packRepository, REPO_ROOT, runCliOk, tempProjectDir } from './harness.js';

/** What a command in the project printed, and how it ended. */
interface Run {
  status: number | null;
  output: string;
}

function inProject(dir: string, command: string, args: string[]): Run {
  // NODE_TEST_CONTEXT would make a `node --test` inside report to this runner.
  const result = spawnSync(command, args, { cwd: dir, encoding: 'utf8', env: childEnv(), timeout: 600_000 });
  // Without colour codes: Prettier and ESLint colour their output when CI=true, even into a pipe.
  // eslint-disable-next-line no-control-regex -- ANSI colour codes start with ESC
  return { status: result.status, output: `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, '') };
}

function ok(run: Run, what: string): string {
  assert.equal(run.status, 0, `${what} failed:\n${run.output}`);
  return run.output;
}

/** The steps that give one project every generated shape. */
const ALL_SHAPES: string[][] = [
  ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'],
  ['create', 'api', '--group', 'cache', '--version', 'v2', '--kind', 'Memcached', '--controller=false'],
  ['edit', '--multigroup'],
  [
    'create',
    'api',
    '--group',
    'botany',
    '--version',
    'v1alpha1',
    '--kind',
    'Cactus',
    '--plural',
    'cacti',
    '--namespaced=false',
  ],
  ['create', 'api', '--version', 'v1alpha1', '--kind', 'Podroute'],
  // A long kind: generated lines must not depend on the name's length to stay within Prettier's width.
  ['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'ReplicatedCacheShard'],
  ['create', 'api', '--group', 'cache', '--version', 'v1beta1', '--kind', 'ReplicatedCacheShard', '--controller=false'],
  [
    'create',
    'webhook',
    '--group',
    'cache',
    '--version',
    'v1',
    '--kind',
    'Memcached',
    '--defaulting',
    '--programmatic-validation',
    '--conversion',
    '--spoke',
    'v2',
  ],
  [
    'create',
    'webhook',
    '--group',
    'cache',
    '--version',
    'v1',
    '--kind',
    'ReplicatedCacheShard',
    '--defaulting',
    '--programmatic-validation',
    '--conversion',
    '--spoke',
    'v1beta1',
  ],
  [
    'create',
    'webhook',
    '--group',
    'botany',
    '--version',
    'v1alpha1',
    '--kind',
    'Cactus',
    '--defaulting',
    '--programmatic-validation',
  ],
  [
    'create',
    'api',
    '--group',
    'route',
    '--version',
    'v1',
    '--kind',
    'Route',
    '--external-api-path',
    'apis/external/route/v1',
    '--external-api-domain',
    'openshift.io',
    '--from-crd',
    join(REPO_ROOT, 'test', 'fixtures', 'external', 'route.crd.yaml'),
  ],
];

/** Files the steps above must have written, so `make lint` really covers them. */
const COVERED_FILES = [
  'test/envtest-setup.ts',
  'webhooks/cache/v1/memcached_webhook.ts',
  'webhooks/cache/v1/memcached_webhook.test.ts',
  'webhooks/cache/v1/replicatedcacheshard_webhook.ts',
  'webhooks/cache/v1/replicatedcacheshard_webhook.test.ts',
  'webhooks/botany/v1alpha1/cactus_webhook.test.ts',
  'apis/cache/v2/memcached_conversion.ts',
  'apis/cache/v1beta1/replicatedcacheshard_conversion.ts',
  'apis/external/route/v1/route_types.ts',
  'controllers/route/route_controller.ts',
];

let project: string;

before(() => {
  const tarball = packRepository();
  project = tempProjectDir('all-shapes-operator');
  const env = { TS_OPERATOR_SDK_PACKAGE_SPEC: `file:${tarball}` };
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], project, { env });
  for (const step of ALL_SHAPES) runCliOk(step, project, { env });
  installDependencies(project);
});

/** Runs `check` with `file` changed by `change`, then restores the file (the tests share one installed project). */
function withPlanted(file: string, change: (source: string) => string, check: () => void): void {
  const original = readFileSync(file, 'utf8');
  const planted = change(original);
  assert.notEqual(planted, original, `nothing was planted in ${file}: the template changed, update this test`);
  writeFileSync(file, planted);
  try {
    check();
  } finally {
    writeFileSync(file, original);
  }
}

// The installed project holds a few hundred MB of node_modules.
after(() => {
  if (project) rmSync(join(project, '..'), { recursive: true, force: true });
});

describe('the generated project formats and lints with Prettier and ESLint', { timeout: 1_800_000 }, () => {
  test('make lint passes with no warning, and make fmt changes nothing', () => {
    for (const file of COVERED_FILES)
      assert.ok(existsSync(join(project, file)), `${file} was not generated: update COVERED_FILES`);
    const output = ok(inProject(project, 'make', ['lint']), 'make lint');
    assert.match(output, /tsc -p \. --noEmit && eslint --max-warnings=0 \. && prettier --check \./);
    assert.match(output, /All matched files use Prettier code style!/);
    // ESLint's and Prettier's warning forms; npm's own notices about the machine's configuration are not the project's.
    assert.doesNotMatch(
      output
        .split('\n')
        .filter((line) => !line.startsWith('npm warn'))
        .join('\n'),
      /\bwarning\b|\[warn\]/i,
    );
    const before = hashTree(project);
    ok(inProject(project, 'make', ['fmt']), 'make fmt');
    assert.equal(hashTree(project), before, 'make fmt changed generated files: a template is not Prettier-formatted');
  });

  test('a project without a license header is formatted too', () => {
    const dir = tempProjectDir('garden-operator');
    runCliOk(['init', '--domain', 'example.com', '--license', 'none', '--skip-install'], dir);
    runCliOk(
      [
        'create',
        'api',
        '--group',
        'botany',
        '--version',
        'v1alpha1',
        '--kind',
        'Cactus',
        '--plural',
        'cacti',
        '--namespaced=false',
      ],
      dir,
    );
    // This project's own .prettierrc.json and .prettierignore apply; the tool comes from the installed project.
    ok(inProject(dir, join(project, 'node_modules', '.bin', 'prettier'), ['--check', '.']), 'prettier --check');
  });

  test('a planted lint error fails make lint; make lint-fix fixes a fixable one', () => {
    const controller = join(project, 'controllers/cache/memcached_controller.ts');
    const reconcileLog = "    ctx.log.info({ generation: metadata.generation, foo: spec?.foo }, 'reconciling');\n";
    // A write nobody awaits: its failure would go unseen.
    withPlanted(
      controller,
      (source) => source.replace(reconcileLog, `${reconcileLog}    this.client.update(memcached);\n`),
      () => {
        const failed = inProject(project, 'make', ['lint']);
        assert.notEqual(failed.status, 0, failed.output);
        assert.match(
          failed.output,
          /controllers\/cache\/memcached_controller\.ts\n\s+\d+:\d+\s+error\s+Promises must be awaited.*@typescript-eslint\/no-floating-promises/,
        );
      },
    );
    // A `let` never reassigned: prefer-const, which --fix rewrites.
    withPlanted(
      controller,
      (source) => `${source}\nexport function plantedLet(): number {\n  let planted = 1;\n  return planted;\n}\n`,
      () => {
        ok(inProject(project, 'make', ['lint-fix']), 'make lint-fix');
        assert.match(readFileSync(controller, 'utf8'), /const planted = 1;/);
        ok(inProject(project, 'make', ['lint']), 'make lint after lint-fix');
      },
    );
  });

  test('a planted formatting error fails make lint, and make fmt fixes it', () => {
    const types = join(project, 'apis/cache/v1/memcached_types.ts');
    const original = readFileSync(types, 'utf8');
    withPlanted(
      types,
      (source) => source.replace('  foo?: string;', '  foo?:    string'),
      () => {
        const failed = inProject(project, 'make', ['lint']);
        assert.notEqual(failed.status, 0, failed.output);
        assert.match(failed.output, /\[warn\] apis\/cache\/v1\/memcached_types\.ts\n/);
        ok(inProject(project, 'make', ['fmt']), 'make fmt');
        assert.equal(readFileSync(types, 'utf8'), original);
      },
    );
  });

  // What the workflow runs, on a clean install, is what `make lint` runs: the steps are read here, and
  // run in order by generated-ci.test.ts, which executes every run: step of every generated workflow
  // (npm ci and make lint included). Running them again here reinstalled node_modules and linted this
  // project a second time after the first test: about 35 s of CPU that checked nothing new.
  test("the lint workflow's run: steps are a clean install, then make lint", () => {
    const workflow = parse(readFileSync(join(project, '.github/workflows/lint.yml'), 'utf8')) as {
      jobs: Record<string, { steps: { run?: string }[] }>;
    };
    const runs = Object.values(workflow.jobs).flatMap((job) =>
      job.steps.flatMap((step) => (step.run ? [step.run] : [])),
    );
    assert.deepEqual(runs, ['npm ci', 'make lint'], 'the workflow runs what `make lint` runs, after a clean install');
  });
});
