// @ts-check
/**
 * Reports an import that leads back to the file it is in: a cycle between
 * this repository's modules. Type-only imports count, unlike in
 * import-x/no-cycle: they are erased at run time, but a cycle of types ties
 * the two modules together as much as any other (three of the four cycles
 * src/ once had were type-only). Relative imports only; packages cannot
 * import back.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import ts from 'typescript';

/** The files each file imports, by path, kept while its mtime is the same (editors lint many times). */
const importsCache = new Map();

/** The repository file a relative specifier names: `./x.js` is compiled from `./x.ts`. */
function resolveImport(fromFile, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const target = resolve(dirname(fromFile), specifier);
  const source = target.replace(/\.js$/, '.ts');
  if (existsSync(source)) return source;
  return existsSync(target) ? target : undefined;
}

function importsOf(file) {
  const mtime = statSync(file).mtimeMs;
  const cached = importsCache.get(file);
  if (cached?.mtime === mtime) return cached.imports;
  // preProcessFile lists static, dynamic, type-only and export-from imports without type-checking.
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const imports = importedFiles.map((entry) => resolveImport(file, entry.fileName)).filter(Boolean);
  importsCache.set(file, { mtime, imports });
  return imports;
}

/** A path of imports from `start` to `goal` (both included), or undefined. */
function pathBetween(start, goal) {
  const seen = new Set([start]);
  const previous = new Map();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift();
    if (file === goal) {
      const path = [file];
      while (previous.has(path[0])) path.unshift(previous.get(path[0]));
      return path;
    }
    for (const next of importsOf(file)) {
      if (seen.has(next)) continue;
      seen.add(next);
      previous.set(next, file);
      queue.push(next);
    }
  }
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
export default {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid an import that leads back to its own file, type-only imports included' },
    schema: [],
    messages: { cycle: 'Import cycle: {{cycle}}. Move what both sides need into a module of its own, or below.' },
  },
  create(context) {
    const file = context.physicalFilename;
    const root = context.cwd;
    const check = (node) => {
      const source = node.source;
      if (source?.type !== 'Literal' || typeof source.value !== 'string') return;
      const target = resolveImport(file, source.value);
      if (target === undefined) return;
      const path = pathBetween(target, file);
      if (path === undefined) return;
      const cycle = [file, ...path].map((each) => relative(root, each)).join(' -> ');
      context.report({ node: source, messageId: 'cycle', data: { cycle } });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};
