/**
 * Two commands writing one project at once: each either succeeds with its
 * whole change in the project, or fails in one line having changed nothing;
 * never an exit 0 whose update the other command then overwrote (the lost
 * update: a kind gone from PROJECT and main.ts while its files stay).
 * Cost: about 40 s (20 pairs of `create api`, 10 of `create webhook`).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { copyProject, runCliAsync, runCliOk, tempProjectDir, type CliExit } from '../scaffold/harness.js';

const API_ROUNDS = 20;
const WEBHOOK_ROUNDS = 10;
/** What a writer that lost the race may say: the project changed under it, or the other one holds the journal. */
const REFUSAL =
  /^Error: (PROJECT|main\.ts|[\w./-]+) changed while this command ran \(another ts-operator-sdk command, or an editor, wrote to the project\), so nothing was written\. Run the command again\.$|^Error: another ts-operator-sdk command \(pid \d+\) is writing this project/;

let withApi: string;

before(() => {
  const base = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], base);
  withApi = copyProject(base);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], withApi);
});

function assertRefusal(exit: CliExit, what: string): void {
  assert.equal(exit.code, 1, `${what}: ${exit.stderr}`);
  assert.match(exit.stderr.trimEnd(), REFUSAL, what);
  assert.equal(exit.stderr.trimEnd().split('\n').length, 1, `${what}: one line`);
}

test(`two create api at once, ${API_ROUNDS} times: each kind is either wholly in the project or wholly absent, and absent only after a non-zero exit`, async () => {
  const outcomes: string[] = [];
  for (let round = 0; round < API_ROUNDS; round++) {
    const dir = copyProject(withApi);
    const kinds = ['Foo', 'Bar'];
    const exits = await Promise.all(
      kinds.map((kind) =>
        runCliAsync(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', kind], {
          cwd: dir,
          timeoutMs: 60_000,
        }),
      ),
    );
    const project = readFileSync(join(dir, 'PROJECT'), 'utf8');
    const main = readFileSync(join(dir, 'main.ts'), 'utf8');
    const crds = readFileSync(join(dir, 'config', 'crd', 'kustomization.yaml'), 'utf8');
    const roles = readFileSync(join(dir, 'config', 'rbac', 'kustomization.yaml'), 'utf8');
    kinds.forEach((kind, index) => {
      const exit = exits[index]!;
      const lower = kind.toLowerCase();
      const present = [
        project.includes(`kind: ${kind}\n`),
        main.includes(`${kind}Reconciler`),
        crds.includes(`cache.example.com_${lower}s.yaml`),
        roles.includes(`${lower}_editor_role.yaml`),
        existsSync(join(dir, 'apis', 'v1', `${lower}_types.ts`)),
        existsSync(join(dir, 'controllers', `${lower}_controller.ts`)),
      ];
      const what = `round ${round + 1}, ${kind} (exit ${exit.code})`;
      if (exit.code === 0)
        assert.deepEqual(
          present,
          present.map(() => true),
          `${what}: every part of it is in the project`,
        );
      else {
        assertRefusal(exit, what);
        assert.deepEqual(
          present,
          present.map(() => false),
          `${what}: nothing of it is in the project`,
        );
      }
    });
    assert.ok(
      exits.some((exit) => exit.code === 0),
      `round ${round + 1}: one of the two wins`,
    );
    assert.equal(
      main.match(/\.setupWithManager\(mgr\)/g)?.length,
      1 + exits.filter((exit) => exit.code === 0).length,
      `round ${round + 1}: main.ts registers exactly the winners`,
    );
    outcomes.push(exits.map((exit) => exit.code).join('/'));
  }
  // Not asserted (a fast machine may serialise every pair), but worth seeing when the test is read.
  console.log(`# exit codes per round: ${outcomes.join(' ')}`);
});

test(`two create webhook at once on one kind, ${WEBHOOK_ROUNDS} times: each webhook type is recorded exactly when its command exited 0`, async () => {
  for (let round = 0; round < WEBHOOK_ROUNDS; round++) {
    const dir = copyProject(withApi);
    const types = [
      { flag: '--defaulting', recorded: /defaulting: true/ },
      { flag: '--programmatic-validation', recorded: /validation: true/ },
    ];
    const exits = await Promise.all(
      types.map(({ flag }) =>
        runCliAsync(['create', 'webhook', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached', flag], {
          cwd: dir,
          timeoutMs: 60_000,
        }),
      ),
    );
    const project = readFileSync(join(dir, 'PROJECT'), 'utf8');
    types.forEach(({ flag, recorded }, index) => {
      const exit = exits[index]!;
      const what = `round ${round + 1}, ${flag} (exit ${exit.code})`;
      if (exit.code === 0) assert.match(project, recorded, `${what}: recorded in PROJECT`);
      else {
        assertRefusal(exit, what);
        assert.doesNotMatch(project, recorded, `${what}: not recorded`);
      }
    });
    assert.ok(
      exits.some((exit) => exit.code === 0),
      `round ${round + 1}: one of the two wins`,
    );
  }
});
