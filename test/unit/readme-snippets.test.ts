/**
 * Every TypeScript snippet in the README (```ts or ```typescript) compiles
 * under the tsconfig a generated project gets (strict), against this
 * repository's built package, inside a scaffolded Memcached project so the
 * snippets' `./apis/v1/memcached_types.js` imports resolve.
 *
 * A snippet that is deliberately a fragment (statements that need names from
 * around them) is marked with `<!-- snippet: fragment -->` on the line before
 * its fence; it is compiled as the body of an async function, with `client`
 * (a Client), `ctx` (a ReconcileContext) and `req` (a Request) in scope.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT, runCliOk, tempProjectDir } from '../scaffold/harness.js';

/** The Markdown files whose TypeScript is checked. */
const DOCUMENTS = ['README.md', 'templates/init/README.md.hbs'];

/** One fenced TypeScript block. */
export interface Snippet {
  document: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  fragment: boolean;
}

/** The ```ts / ```typescript blocks of a Markdown text. */
export function typescriptSnippets(document: string, markdown: string): Snippet[] {
  const lines = markdown.split('\n');
  const snippets: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i]!)) continue;
    const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line));
    assert.ok(end > i, `${document}:${i + 1}: a TypeScript block that is never closed`);
    const fragment = i > 0 && /^<!--\s*snippet:\s*fragment\s*-->$/.test(lines[i - 1]!.trim());
    snippets.push({ document, line: i + 1, code: lines.slice(i + 1, end).join('\n'), fragment });
    i = end;
  }
  return snippets;
}

/** A fragment as a module: its imports stay on top, the rest becomes a function body. */
function fragmentModule(code: string): string {
  const lines = code.split('\n');
  const imports = lines.filter((line) => /^import\s/.test(line));
  const body = lines.filter((line) => !/^import\s/.test(line));
  return [
    "import type { Client, ReconcileContext, Request } from 'ts-operator-sdk';",
    ...imports,
    'export async function fragment(client: Client, ctx: ReconcileContext, req: Request): Promise<unknown> {',
    ...body.map((line) => `  ${line}`),
    '  return undefined;',
    '}',
  ].join('\n');
}

test('every TypeScript snippet in the README compiles under the generated strict tsconfig', () => {
  const snippets = DOCUMENTS.flatMap((document) =>
    typescriptSnippets(document, readFileSync(join(REPO_ROOT, document), 'utf8')),
  );
  assert.ok(
    snippets.some((snippet) => snippet.document === 'README.md'),
    'the README has TypeScript snippets to check',
  );

  const dir = tempProjectDir();
  runCliOk(['init', '--domain', 'example.com', '--skip-install'], dir);
  runCliOk(['create', 'api', '--group', 'cache', '--version', 'v1', '--kind', 'Memcached'], dir);
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(REPO_ROOT, join(dir, 'node_modules', 'ts-operator-sdk'), 'dir');
  symlinkSync(join(REPO_ROOT, 'node_modules', '@kubernetes'), join(dir, 'node_modules', '@kubernetes'), 'dir');
  symlinkSync(join(REPO_ROOT, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'), 'dir');

  // Each snippet is its own module at the project root, named after where it comes from.
  const files = new Map<string, Snippet>();
  for (const snippet of snippets) {
    const file = `snippet_${snippet.document.replace(/[^a-z0-9]+/gi, '_')}_${snippet.line}.ts`;
    writeFileSync(join(dir, file), snippet.fragment ? fragmentModule(snippet.code) : `${snippet.code}\nexport {};\n`);
    files.set(file, snippet);
  }
  const tsconfig = JSON.parse(readFileSync(join(dir, 'tsconfig.json'), 'utf8')) as { include: string[] };
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({ ...tsconfig, include: [...tsconfig.include, 'snippet_*.ts'] }),
  );

  const tsc = spawnSync(
    process.execPath,
    [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--noEmit', '--pretty', 'false'],
    { cwd: dir, encoding: 'utf8', timeout: 300_000 },
  );
  // Errors point back at the README line: file(line,col) → document:line.
  const output = `${tsc.stdout}${tsc.stderr}`.replace(
    /^(snippet_\S+?\.ts)\((\d+),\d+\)/gm,
    (whole, file: string, line: string) => {
      const snippet = files.get(file);
      if (!snippet) return whole;
      return snippet.fragment
        ? `${snippet.document}:${snippet.line} (fragment, line ${line} of its wrapper)`
        : `${snippet.document}:${snippet.line + Number(line)}`;
    },
  );
  assert.equal(output, '', 'a README snippet does not compile');
  assert.equal(tsc.status, 0);
});

test("the README's install path names this version's tarball and the variable init reads", async () => {
  const { PACKAGE_SPEC_VARIABLE, packageInfo } = await import('../../src/scaffold/package-info.js');
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const tarball = `${packageInfo.name}-${packageInfo.version}.tgz`;
  // What `npm pack` writes, handed to init the way test/scaffold/*.test.ts hand it (they run this path end to end).
  assert.ok(readme.includes(`npm ci && npm pack`), 'the README packs the checkout');
  assert.ok(
    readme.includes(`${PACKAGE_SPEC_VARIABLE}="file:$SDK/${tarball}" node "$SDK/bin/ts-operator-sdk.js" init`),
    `the README's init line uses ${tarball}`,
  );
});
