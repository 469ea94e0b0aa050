// require, not import: as ESM, Node first scans typescript's 9 MB CommonJS file for module syntax (~0.25 s).
import ts = require('typescript');
import type { ProblemList } from '../problems.js';

/**
 * Where the CRD's value of a name came from: a `+kubebuilder:resource`
 * marker (with its place) or PROJECT (the `plural` and `api.namespaced` of
 * the resource).
 */
export type NameSource = { marker: string; file: string; line: number } | { project: true };

/** The plural and scope the CRD gets, each with its source. */
export interface CrdNames {
  kind: string;
  version: string;
  plural: string;
  pluralFrom: NameSource;
  namespaced: boolean;
  namespacedFrom: NameSource;
}

/**
 * The runtime reads a kind's URL (plural) and scope from
 * `defineKind({ plural, namespaced })` in the types file, the CRD from the
 * `+kubebuilder:resource` marker or PROJECT. When they differ the operator
 * calls URLs the API server does not serve, so each disagreement is a
 * problem at the `defineKind` property. A value that is not a literal (a
 * constant, a spread) is not checked: only the compiler could follow it.
 */
export function checkDefineKind(
  files: readonly ts.SourceFile[],
  names: CrdNames,
  displayPath: (fileName: string) => string,
  problems: ProblemList,
): void {
  const call = findDefineKind(files, names.kind);
  if (!call) return;
  const file = displayPath(call.sf.fileName);
  for (const property of call.argument.properties) {
    if (!ts.isPropertyAssignment(property) || !(ts.isIdentifier(property.name) || ts.isStringLiteral(property.name)))
      continue;
    const line = call.sf.getLineAndCharacterOfPosition(property.getStart(call.sf)).line + 1;
    const value = property.initializer;
    if (property.name.text === 'plural' && ts.isStringLiteralLike(value) && value.text !== names.plural) {
      problems.add(
        file,
        line,
        `defineKind for ${names.kind} ${names.version} says plural "${value.text}", but ${describe(names.pluralFrom, `plural "${names.plural}"`)}, and the CRD uses that: make them the same`,
      );
    }
    const literal =
      value.kind === ts.SyntaxKind.TrueKeyword ? true : value.kind === ts.SyntaxKind.FalseKeyword ? false : undefined;
    if (property.name.text === 'namespaced' && literal !== undefined && literal !== names.namespaced) {
      const scope = names.namespaced ? 'Namespaced' : 'Cluster';
      problems.add(
        file,
        line,
        `defineKind for ${names.kind} ${names.version} says namespaced: ${literal}, but ${describe(names.namespacedFrom, `scope ${scope}`)}, and the CRD uses that: make them the same`,
      );
    }
  }
}

function describe(source: NameSource, what: string): string {
  if ('project' in source) return `PROJECT gives ${what}`;
  return `${source.marker} (${source.file}:${source.line}) gives ${what}`;
}

/** `export const <Kind> = defineKind<...>({ ... kind: '<Kind>' ... })`, found by the kind property or the variable name. */
function findDefineKind(
  files: readonly ts.SourceFile[],
  kind: string,
): { sf: ts.SourceFile; argument: ts.ObjectLiteralExpression } | undefined {
  let byName: { sf: ts.SourceFile; argument: ts.ObjectLiteralExpression } | undefined;
  for (const sf of files) {
    for (const statement of sf.statements) {
      if (!ts.isVariableStatement(statement)) continue;
      for (const declaration of statement.declarationList.declarations) {
        const init = declaration.initializer;
        if (
          !init ||
          !ts.isCallExpression(init) ||
          !ts.isIdentifier(init.expression) ||
          init.expression.text !== 'defineKind'
        )
          continue;
        const argument = init.arguments[0];
        if (!argument || !ts.isObjectLiteralExpression(argument)) continue;
        const kindProperty = argument.properties.find(
          (p): p is ts.PropertyAssignment =>
            ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === 'kind',
        );
        if (kindProperty && ts.isStringLiteralLike(kindProperty.initializer)) {
          if (kindProperty.initializer.text === kind) return { sf, argument };
          continue;
        }
        if (ts.isIdentifier(declaration.name) && declaration.name.text === kind) byName = { sf, argument };
      }
    }
  }
  return byName;
}
