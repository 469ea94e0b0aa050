import { resolve } from 'node:path';
import { newBaseCsv, renderYaml, updateBaseCsvText, type CsvUiMetadata } from '../../generators/csv/base.js';
import { readOwnedCrdDescriptions } from '../../generators/csv/descriptors.js';
import { UsageError } from '../../errors.js';
import { displayPath, resolveFlagPath, treePath } from '../../paths.js';
import { validatePackageName } from '../../scaffold/names.js';
import { readProject } from '../../scaffold/project.js';
import { renderTemplate } from '../../scaffold/render.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { apiResourcesOf } from './api-resources.js';
import { finishTree, type CommandIO } from '../../cli/io.js';

/** Options of `ts-operator-sdk generate kustomize manifests`. */
export interface GenerateKustomizeManifestsOptions {
  directory: string;
  /** Package (CSV) name; defaults to PROJECT's projectName. */
  packageName?: string;
  /** Where an existing base is read from (default `config/manifests`). */
  inputDir?: string;
  /** Where the base and kustomization are written, when the user named it (default `config/manifests`, inside the project). */
  outputDir?: string;
  /** The API types root (default `apis`); PROJECT resource paths under `apis/` are re-rooted here. */
  apisDir?: string;
  /** `--interactive`: undefined means "prompt if stdin is a terminal and no base exists". */
  interactive?: boolean;
  /** Whether stdin is a terminal. Prompts never run without one. */
  terminal: boolean;
  quiet: boolean;
  /** Print the CREATE/UPDATE lines instead of writing. */
  dryRun?: boolean;
  /** Asks one free-text question (only called when prompting). */
  ask?: (question: string) => Promise<string>;
}

/**
 * `generate kustomize manifests`: writes the base CSV
 * (`<output>/bases/<package>.clusterserviceversion.yaml`) with owned CRDs and
 * their marker descriptors, and `<output>/kustomization.yaml` when missing.
 * An existing base keeps every user edit; only the marker-derived parts of
 * the owned CRDs are re-applied. Without a terminal it never prompts.
 */
export async function generateKustomizeManifestsCommand(
  options: GenerateKustomizeManifestsOptions,
  io: CommandIO,
): Promise<void> {
  const projectDir = resolve(options.directory);
  // Tree paths relative to the project (`../` when outside it), so absolute flags are not glued onto it.
  const outputAbs = resolveFlagPath(projectDir, options.outputDir ?? 'config/manifests');
  const tree = new VirtualTree(projectDir, { outputs: options.outputDir === undefined ? [] : [outputAbs] });
  const project = tree.exists('PROJECT') ? readProject(tree) : undefined;
  const packageName = options.packageName ?? project?.projectName;
  if (!packageName)
    throw new UsageError(
      '--package <name> must be set if PROJECT config file is not present',
      'pass --package, or run in the project root',
    );
  validatePackageName(packageName, options.packageName !== undefined ? '--package' : 'PROJECT');
  const outputDir = treePath(projectDir, outputAbs);
  const inputDir =
    options.inputDir === undefined ? outputDir : treePath(projectDir, resolveFlagPath(projectDir, options.inputDir));
  const apisDir = treePath(projectDir, resolveFlagPath(projectDir, options.apisDir ?? 'apis'));
  const resources = project
    ? apiResourcesOf(project).map((r) =>
        apisDir !== 'apis' && r.path.startsWith('apis/')
          ? { ...r, path: `${apisDir}/${r.path.slice('apis/'.length)}` }
          : r,
      )
    : [];
  let owned;
  try {
    owned = readOwnedCrdDescriptions(projectDir, resources);
  } catch (err) {
    if (!(err instanceof UsageError) || err.problems.length === 0) throw err;
    throw new UsageError(
      `generate kustomize manifests found ${err.problems.length} marker problem(s) in the API types (listed above); nothing was written`,
      'fix them and run it again',
      { problems: err.problems },
    );
  }

  const baseFile = `bases/${packageName}.clusterserviceversion.yaml`;
  const existing = tree.read(`${inputDir}/${baseFile}`);
  let content: string;
  if (existing !== undefined) {
    try {
      content = updateBaseCsvText(existing, owned);
    } catch (err) {
      throw new UsageError(
        `${inputDir}/${baseFile} is not valid YAML (${(err as Error).message.split('\n')[0]})`,
        'fix it, or delete it to start from a fresh base',
        { cause: err },
      );
    }
  } else {
    const wantsPrompts = options.interactive !== false && options.terminal && options.ask !== undefined;
    if (options.interactive === true && !options.terminal && !options.quiet)
      io.progress('Note: --interactive ignored: stdin is not a terminal, so the base CSV gets placeholder UI metadata');
    const ui = wantsPrompts ? await askUiMetadata(options.ask!) : {};
    content = renderYaml(newBaseCsv(packageName, owned, ui));
  }
  const outputBase = `${outputDir}/${baseFile}`;
  if (tree.read(outputBase) !== content) tree.write(outputBase, content);
  const kustomization = `${outputDir}/kustomization.yaml`;
  if (!tree.exists(kustomization))
    tree.write(
      kustomization,
      renderTemplate('init/config/manifests/kustomization.yaml.hbs', { projectName: packageName }),
    );
  if (!(await finishTree(tree, io, options.dryRun === true))) return;
  if (!options.quiet) io.progress(`Kustomize files generated successfully in ${displayPath(projectDir, outputAbs)}`);
}

/** operator-sdk's questions; blank answers keep the placeholders. */
async function askUiMetadata(ask: (question: string) => Promise<string>): Promise<CsvUiMetadata> {
  const ui: CsvUiMetadata = {};
  ui.displayName = (await ask('Display name for the operator (required): ')).trim() || undefined;
  ui.description = (await ask('Description for the operator (required): ')).trim() || undefined;
  ui.providerName = (await ask("Provider's name for the operator (required): ")).trim() || undefined;
  ui.providerUrl = (await ask('Any relevant URL for the provider name (optional): ')).trim() || undefined;
  const keywords = (await ask('Comma-separated list of keywords for your operator (required): ')).trim();
  if (keywords)
    ui.keywords = keywords
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
  const maintainers = (
    await ask("Comma-separated list of maintainers and their emails (e.g. 'name1:email1, name2:email2') (required): ")
  ).trim();
  if (maintainers) {
    ui.maintainers = maintainers
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean)
      .map((m) => {
        const [name, email] = m.split(':').map((p) => p.trim());
        if (!name || !email)
          throw new UsageError(
            `maintainer "${m}" is not name:email`,
            "answer like 'Jane Doe:jane@example.com, Joe:joe@example.com'",
          );
        return { name, email };
      });
  }
  return ui;
}
