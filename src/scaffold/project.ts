import { statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import {
  isMap,
  isNode,
  isScalar,
  isSeq,
  parseDocument,
  stringify,
  type Document,
  type Pair,
  type YAMLMap,
  type YAMLSeq,
} from 'yaml';
import { UsageError } from '../errors.js';
import type { VirtualTree } from './tree.js';
import { byteOrder } from '../byte-order.js';
import {
  HEADER,
  LAYOUT_PLUGIN,
  PROJECT_FILE,
  newProjectText,
  withoutZeroValues,
  type ProjectConfig,
  type ProjectResource,
} from './project-text.js';

export {
  DEFAULT_PLUGINS,
  LAYOUT_PLUGIN,
  PROJECT_FILE,
  type ProjectConfig,
  type ProjectResource,
  type ResourceApi,
  type ResourceWebhooks,
} from './project-text.js';

/** The API group of a resource: `<group>.<domain>`, or the domain alone when there is no group. */
export function qualifiedGroup(resource: Pick<ProjectResource, 'group' | 'domain'>): string {
  if (!resource.group) return resource.domain ?? '';
  return resource.domain ? `${resource.group}.${resource.domain}` : resource.group;
}

/** Whether two resources name the same group/version/kind. */
export function sameGvk(a: ProjectResource, b: ProjectResource): boolean {
  return qualifiedGroup(a) === qualifiedGroup(b) && a.version === b.version && a.kind === b.kind;
}

/** Options of {@link readProject} and {@link parseProject}. */
export interface ReadProjectOptions {
  /**
   * A faster YAML reader that returns undefined when it is unsure
   * (quickParseYaml in src/yaml-input.ts), tried before the yaml library:
   * that library's parser, cold, costs ~15-30 ms for this small file, against
   * ~5 ms for js-yaml's. Passed by commands that load js-yaml anyway for
   * their manifests; the others would load one more module for it.
   */
  quickParse?: (text: string) => unknown[] | undefined;
}

/**
 * Reads PROJECT from the tree. Throws a one-line {@link UsageError} when it
 * is missing (not in a project root) or not a config v3 document.
 */
export function readProject(tree: VirtualTree, options: ReadProjectOptions = {}): ProjectConfig {
  const text = tree.read(PROJECT_FILE);
  if (text === undefined) {
    unreadableProject(tree.root);
    throw new UsageError(
      `no PROJECT file in ${tree.root}: this command must run in the root of a project`,
      'cd into the project directory, or create one with `ts-operator-sdk init`',
    );
  }
  return parseProject(text, options);
}

/**
 * Throws the right error when PROJECT exists but cannot be read (a directory,
 * no read permission), so it is not reported as missing; returns when it is
 * really absent.
 */
function unreadableProject(root: string): void {
  const path = join(root, PROJECT_FILE);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR')
      throw new UsageError(`${root} is not a directory`, 'run the command in the root of a project');
    throw new UsageError(
      `cannot reach the PROJECT file in ${root} (${code})`,
      'make the project directory readable and run the command again',
      { cause: error },
    );
  }
  if (isDirectory) {
    throw new UsageError(
      `PROJECT in ${root} is a directory, not the project's config file`,
      'move that directory away and restore the PROJECT file from version control',
    );
  }
  throw new UsageError(
    `cannot read the PROJECT file in ${root} (permission denied or unreadable)`,
    'make it readable (e.g. chmod u+r PROJECT) and run the command again',
  );
}

/**
 * Throws unless the project was scaffolded by this tool: a PROJECT whose
 * layout names another plugin (a Go kubebuilder project's
 * `go.kubebuilder.io/v4`) has files this tool does not know, so changing it
 * would damage it. A PROJECT without a layout is taken as ours.
 */
export function assertOurLayout(project: ProjectConfig): void {
  if (project.layout.length === 0 || project.layout.includes(LAYOUT_PLUGIN)) return;
  throw new UsageError(
    `this project's layout is ${project.layout.map((key) => `"${key}"`).join(', ')}, not "${LAYOUT_PLUGIN}": ts-operator-sdk does not change projects of other plugins`,
    `use the tool that made it (e.g. kubebuilder or operator-sdk for go.kubebuilder.io), or start a TypeScript project with \`ts-operator-sdk init\``,
  );
}

/**
 * The text each config was read from, so that writing it back keeps what
 * this model does not know: unknown keys (`cliVersion`, `repo`, plugin
 * configs) and the user's comments. Kept as text and parsed into a yaml
 * Document only by {@link formatProject}: most commands read PROJECT and
 * never write it.
 */
const sourceTexts = new WeakMap<ProjectConfig, string>();

/** Parses the text of a PROJECT file (see {@link readProject}). */
export function parseProject(text: string, options: ReadProjectOptions = {}): ProjectConfig {
  const corrupt = (why: string): UsageError =>
    new UsageError(`the PROJECT file is corrupt: ${why}`, 'fix it by hand or restore it from version control');
  // The quick reader's values when it is sure of them; anything else (an
  // error, several documents, not a mapping) is left to the yaml library and
  // its messages.
  const [quick, ...more] = options.quickParse?.(text) ?? [];
  let raw: Record<string, unknown>;
  if (more.length === 0 && isPlainObject(quick)) {
    raw = quick;
  } else {
    const document = parseDocument(text, { prettyErrors: false });
    if (document.errors.length > 0) throw corrupt(`invalid YAML (${document.errors[0]!.message.split('\n')[0]})`);
    if (!isMap(document.contents)) throw corrupt('it is not a YAML mapping');
    raw = document.toJS() as Record<string, unknown>;
  }
  if (String(raw.version) !== '3')
    throw corrupt(`unsupported version ${JSON.stringify(raw.version ?? null)} (only "3" is supported)`);
  const layout = typeof raw.layout === 'string' ? [raw.layout] : raw.layout;
  if (layout !== undefined && (!Array.isArray(layout) || layout.some((entry) => typeof entry !== 'string')))
    throw corrupt('"layout" must be a list of plugin keys');
  for (const key of ['domain', 'projectName'] as const) {
    if (raw[key] !== undefined && typeof raw[key] !== 'string') throw corrupt(`"${key}" must be a string`);
  }
  if (raw.multigroup !== undefined && typeof raw.multigroup !== 'boolean')
    throw corrupt('"multigroup" must be true or false');
  if (
    raw.plugins !== undefined &&
    (typeof raw.plugins !== 'object' || raw.plugins === null || Array.isArray(raw.plugins))
  )
    throw corrupt('"plugins" must be a mapping');
  if (raw.resources !== undefined && !Array.isArray(raw.resources)) throw corrupt('"resources" must be a list');
  const resources = (raw.resources as unknown[] | undefined)?.map((entry, index) => {
    if (typeof entry !== 'object' || entry === null) throw corrupt(`resources[${index}] is not a mapping`);
    const resource = entry as ProjectResource;
    if (typeof resource.kind !== 'string' || typeof resource.version !== 'string')
      throw corrupt(`resources[${index}] needs "kind" and "version"`);
    return resource;
  });
  const config: ProjectConfig = {
    version: '3',
    domain: raw.domain as string | undefined,
    layout: (layout as string[] | undefined) ?? [],
    multigroup: raw.multigroup,
    plugins: raw.plugins as ProjectConfig['plugins'],
    projectName: raw.projectName as string | undefined,
    resources,
  };
  sourceTexts.set(config, text);
  return config;
}

/** Renders PROJECT the way kubebuilder writes it: header, sorted keys, zero values left out. */
export function formatProject(config: ProjectConfig): string {
  const model = withoutZeroValues(config);
  const source = sourceTexts.get(config);
  if (source !== undefined)
    return updateDocument(parseDocument(source, { prettyErrors: false }), model).toString({
      indentSeq: false,
      lineWidth: 0,
    });
  return (
    newProjectText(config) ?? `${HEADER}${stringify(model, { indentSeq: false, lineWidth: 0, sortMapEntries: true })}`
  );
}

/** The top-level keys {@link ProjectConfig} models; every other key is the user's (or another tool's) and is kept. */
const MODELLED_KEYS = ['version', 'domain', 'layout', 'multigroup', 'plugins', 'projectName', 'resources'] as const;

/**
 * Writes the model into the document it was read from, touching only nodes
 * whose value changed, so comments (on the file, on an entry, on a key inside
 * an entry) and unknown keys stay where they were.
 */
function updateDocument(document: Document, model: Record<string, unknown>): Document {
  const contents = document.contents as YAMLMap;
  for (const key of MODELLED_KEYS) {
    const wanted = model[key];
    if (wanted === undefined) {
      if (contents.has(key)) contents.delete(key);
      continue;
    }
    const current = contents.get(key, true);
    // The model says "3"; a hand-written `version: 3` means the same and stays as written.
    if (key === 'version' && isScalar(current) && typeof wanted === 'string' && String(current.value) === wanted)
      continue;
    setMerged(document, contents, key, current, wanted);
  }
  // Kubebuilder writes the keys sorted; new keys join in order, unknown ones included.
  sortPairs(document, contents);
  return document;
}

/**
 * Sets `key` of `parent` to `wanted`, reusing the node that is there: a
 * mapping or list is merged entry by entry and a scalar keeps its node, so
 * the comments attached to them survive. Only a value of another shape is
 * replaced by a new node.
 */
function setMerged(
  document: Document,
  parent: YAMLMap | YAMLSeq,
  key: string | number,
  current: unknown,
  wanted: unknown,
): void {
  if (isNode(current) && isDeepStrictEqual(current.toJS(document), wanted)) return;
  if (isMap(current) && isPlainObject(wanted)) {
    for (const pair of [...current.items]) {
      const name = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      if (!(name in wanted)) current.delete(pair.key);
    }
    for (const [name, value] of Object.entries(wanted))
      setMerged(document, current, name, current.get(name, true), value);
    sortPairs(document, current);
    return;
  }
  if (isSeq(current) && Array.isArray(wanted)) {
    // Item by item: an entry appended to `resources` leaves the others, and their comments, alone.
    wanted.forEach((item, index) => setMerged(document, current, index, current.items[index], item));
    current.items.splice(wanted.length);
    return;
  }
  if (isScalar(current) && (wanted === null || typeof wanted !== 'object')) {
    current.value = wanted;
    return;
  }
  const node = document.createNode(sortedKeys(wanted));
  if (isSeq(parent) && typeof key === 'number' && key >= parent.items.length) parent.items.push(node);
  else parent.set(key, node);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sorts a mapping's keys as kubebuilder writes them; each pair keeps its comments. */
function sortPairs(document: Document, map: YAMLMap): void {
  const name = (pair: Pair): string => String(isNode(pair.key) ? pair.key.toJS(document) : pair.key);
  map.items.sort((a, b) => byteOrder(name(a), name(b)));
}

/** A copy of `value` whose mappings list their keys sorted, as the YAML should. */
function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .sort(([a], [b]) => byteOrder(a, b))
      .map(([key, child]) => [key, sortedKeys(child)]),
  );
}

/** Stages PROJECT in the tree. */
export function writeProject(tree: VirtualTree, config: ProjectConfig): void {
  tree.write(PROJECT_FILE, formatProject(config));
}
