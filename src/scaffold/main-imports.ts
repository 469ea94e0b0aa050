import { ScaffoldMarkers } from './markers.js';
import type { Inserter } from './inserter.js';

/** A name main.ts imports for a kind (its reconciler, its webhook setup), and the local name it gets there. */
export interface MainImport {
  /** The exported name, e.g. `MemcachedReconciler`. */
  name: string;
  /** The relative module specifier from main.ts. */
  from: string;
  /** The name main.ts uses: `name`, or the alias when `name` is already imported from another module. */
  local: string;
}

/**
 * How main.ts imports `name` from `from`: under its own name, or under
 * `alias` when main.ts already imports that name from another module (the
 * same kind in two groups of a multigroup project). Every command that adds
 * an import to main.ts decides the local name here, so the rule cannot
 * differ between controllers and webhooks.
 */
export function mainImport(mainTs: string, wanted: { name: string; from: string; alias: string }): MainImport {
  const imported = new RegExp(`^import \\{[^}]*\\b${wanted.name}\\b[^}]*\\} from '([^']+)';$`, 'm').exec(mainTs);
  const local = !imported || imported[1] === wanted.from ? wanted.name : wanted.alias;
  return { name: wanted.name, from: wanted.from, local };
}

/** The inserters that add `imported` to main.ts's imports, and `setup` (lines using its local name) before the builder marker. */
export function mainInserters(imported: MainImport, setup: readonly string[]): Inserter[] {
  const specifier = imported.local === imported.name ? imported.name : `${imported.name} as ${imported.local}`;
  return [
    {
      path: 'main.ts',
      marker: ScaffoldMarkers.imports,
      fragments: [`import { ${specifier} } from '${imported.from}';`],
    },
    { path: 'main.ts', marker: ScaffoldMarkers.builder, fragments: [...setup] },
  ];
}
