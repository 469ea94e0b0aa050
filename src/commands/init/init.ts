import { readdirSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { fnv1a32 } from '../../fnv.js';
import { BOILERPLATE_FILE, LICENSES, boilerplateHeader } from '../../scaffold/boilerplate.js';

export { LICENSES };
import { UsageError } from '../../errors.js';
import { scaffoldFiles, type FileSpec } from '../../scaffold/files.js';
import { validateDomain, validateProjectName } from '../../scaffold/names.js';
import { sdkPackageSpec, SCORECARD_IMAGE, vendoredTarball } from '../../scaffold/package-info.js';
import {
  DEFAULT_PLUGINS,
  LAYOUT_PLUGIN,
  PROJECT_FILE,
  newProjectText,
  type ProjectConfig,
} from '../../scaffold/project-text.js';
import { VirtualTree } from '../../scaffold/tree.js';
import { finishTree, type CommandIO } from '../../cli/io.js';

/** The licenses `init --license` knows. */
/** One of {@link LICENSES}. */
export type License = (typeof LICENSES)[number];

/** Options of `ts-operator-sdk init`. */
export interface InitOptions {
  /** The directory to scaffold into (the current directory for the CLI). */
  directory: string;
  domain: string;
  /** Defaults to the directory name, lowercased. */
  projectName?: string;
  owner?: string;
  license: string;
  skipInstall: boolean;
  dryRun: boolean;
}

/** Files `init` writes; `skip` where a user may already have their own (dot-files, README). */
export function initFiles(license: License): FileSpec[] {
  const specs: FileSpec[] = [
    { path: 'package.json', template: 'init/package.json.hbs', ifExists: 'error' },
    { path: 'tsconfig.json', template: 'init/tsconfig.json.hbs', ifExists: 'error' },
    { path: '.gitignore', template: 'init/gitignore.hbs', ifExists: 'skip' },
    { path: '.dockerignore', template: 'init/dockerignore.hbs', ifExists: 'skip' },
    { path: '.npmrc', template: 'init/npmrc.hbs', ifExists: 'skip' },
    { path: '.prettierrc.json', template: 'init/prettierrc.json.hbs', ifExists: 'skip' },
    { path: '.prettierignore', template: 'init/prettierignore.hbs', ifExists: 'skip' },
    { path: 'eslint.config.js', template: 'init/eslint.config.js.hbs', ifExists: 'error' },
    { path: '.github/workflows/test.yml', template: 'init/github/workflows/test.yml.hbs', ifExists: 'skip' },
    { path: '.github/workflows/lint.yml', template: 'init/github/workflows/lint.yml.hbs', ifExists: 'skip' },
    { path: 'README.md', template: 'init/README.md.hbs', ifExists: 'skip' },
    { path: 'Makefile', template: 'init/Makefile.hbs', ifExists: 'error' },
    { path: 'Dockerfile', template: 'init/Dockerfile.hbs', ifExists: 'error' },
    { path: 'main.ts', template: 'init/main.ts.hbs', ifExists: 'error' },
    { path: 'test/envtest-setup.ts', template: 'init/test/envtest-setup.ts.hbs', ifExists: 'error' },
  ];
  if (license === 'apache2')
    specs.push({ path: BOILERPLATE_FILE, template: 'init/hack/boilerplate.ts.txt.hbs', ifExists: 'error' });
  const config = [
    'default/kustomization.yaml',
    'default/manager_metrics_patch.yaml',
    'default/metrics_service.yaml',
    'default/cert_metrics_manager_patch.yaml',
    'manager/kustomization.yaml',
    'manager/manager.yaml',
    'rbac/kustomization.yaml',
    'rbac/service_account.yaml',
    'rbac/role.yaml',
    'rbac/role_binding.yaml',
    'rbac/leader_election_role.yaml',
    'rbac/leader_election_role_binding.yaml',
    'rbac/metrics_auth_role.yaml',
    'rbac/metrics_auth_role_binding.yaml',
    'rbac/metrics_reader_role.yaml',
    'prometheus/kustomization.yaml',
    'prometheus/monitor.yaml',
    'prometheus/monitor_tls_patch.yaml',
    'network-policy/kustomization.yaml',
    'network-policy/allow-metrics-traffic.yaml',
    'manifests/kustomization.yaml',
    'scorecard/kustomization.yaml',
    'scorecard/bases/config.yaml',
    'scorecard/patches/basic.config.yaml',
    'scorecard/patches/olm.config.yaml',
  ];
  for (const file of config)
    specs.push({ path: `config/${file}`, template: `init/config/${file}.hbs`, ifExists: 'error' });
  return specs;
}

/**
 * Kubebuilder's rule for where init may run: dot-files, Markdown and
 * ALL-CAPS files (LICENSE, OWNERS) may already be there; PROJECT or anything
 * else means a project (or unrelated work) would be clobbered.
 */
export function checkDirectoryForInit(directory: string): void {
  let entries: string[];
  try {
    entries = readdirSync(directory);
  } catch (error) {
    throw new UsageError(
      `cannot read ${directory} (${(error as NodeJS.ErrnoException).code})`,
      'run init in an existing, readable directory',
    );
  }
  if (entries.includes(PROJECT_FILE)) {
    throw new UsageError(
      `${directory} already has a PROJECT file: it is already a project`,
      'run init in a new, empty directory',
    );
  }
  const disallowed = entries
    .filter((entry) => !entry.startsWith('.') && !entry.endsWith('.md') && !/^[A-Z][A-Z0-9_-]*$/.test(entry))
    .sort();
  if (disallowed.length > 0) {
    throw new UsageError(
      `target directory is not empty and contains ${disallowed.map((entry) => `"${entry}"`).join(', ')} (only dot-files, *.md and ALL-CAPS files such as LICENSE may be present)`,
      'run init in an empty directory, or move those files away',
    );
  }
}

/**
 * The Lease name: stable per project, so replicas of one operator agree on
 * it. kubebuilder's form, `<FNV-1a 32 hex>.<domain>` (its hashFNV), of the
 * project name and domain, as a TypeScript project has no Go repo path.
 */
export function leaderElectionId(projectName: string, domain: string): string {
  return `${fnv1a32(`${projectName}.${domain}`)}.${domain}`;
}

/** `ts-operator-sdk init`: scaffolds a new operator project. */
export async function init(options: InitOptions, io: CommandIO): Promise<void> {
  const directory = resolve(options.directory);
  if (!(LICENSES as readonly string[]).includes(options.license)) {
    throw new UsageError(`unknown license "${options.license}"`, `pass --license ${LICENSES.join(' or --license ')}`);
  }
  const license = options.license as License;
  validateDomain(options.domain);
  const projectName = options.projectName ?? basename(directory).toLowerCase();
  validateProjectName(projectName);
  checkDirectoryForInit(directory);

  const tree = new VirtualTree(directory);
  const year = new Date().getFullYear();
  // The owner lands inside the /* */ license comment of every .ts file: a
  // `*/` in it would end the comment early and break them all.
  const owner = (options.owner ?? '').replace(/\*\//g, '*\\/');
  // The boilerplate goes in first so main.ts can be rendered with it.
  const specs = initFiles(license);
  // A tarball spec is copied into the project (and COPYed by the Dockerfile) so the image build can install it.
  const packageSpec = sdkPackageSpec();
  const vendored = vendoredTarball(packageSpec);
  if (vendored) tree.writeBytes(vendored.path, vendored.content);
  const base = {
    projectName,
    domain: options.domain,
    owner,
    year,
    apache2: license === 'apache2',
    packageLicense: license === 'apache2' ? 'Apache-2.0' : 'UNLICENSED',
    sdkPackageSpec: vendored?.spec ?? packageSpec,
    vendoredSdkTarball: vendored?.path ?? false,
    scorecardImage: SCORECARD_IMAGE,
    leaderElectionID: leaderElectionId(projectName, options.domain),
  };
  scaffoldFiles(
    tree,
    specs.filter((spec) => spec.path === BOILERPLATE_FILE),
    base,
  );
  scaffoldFiles(
    tree,
    specs.filter((spec) => spec.path !== BOILERPLATE_FILE),
    { ...base, boilerplate: boilerplateHeader(tree) },
  );
  const project: ProjectConfig = {
    version: '3',
    domain: options.domain,
    layout: [LAYOUT_PLUGIN],
    plugins: structuredClone(DEFAULT_PLUGINS),
    projectName,
  };
  // Without the yaml library when the values allow it (project-text.ts says why).
  tree.write(
    PROJECT_FILE,
    newProjectText(project) ?? (await import('../../scaffold/project.js')).formatProject(project),
  );

  // The Makefile and the hint below run the CLI from the project's node_modules.
  // Printed before the files are written (see finishTree), so before the install's own output.
  const next = options.skipInstall
    ? [
        'Next: install the dependencies (ts-operator-sdk among them) with:',
        '$ npm install',
        'then define a resource with:',
      ]
    : ['Next: once the dependencies are installed (`npm install` runs now), define a resource with:'];
  if (
    !(await finishTree(tree, io, options.dryRun, [
      ...next,
      '$ npx ts-operator-sdk create api --group <group> --version <version> --kind <Kind>',
    ]))
  )
    return;

  if (!options.skipInstall) {
    io.progress('Installing dependencies with `npm install` (this may take a minute)...');
    // execa: it rejects with the cause spelled out (ENOENT when npm is missing, the exit code otherwise).
    const { execa } = await import('execa');
    try {
      await execa('npm', ['install', '--no-audit', '--no-fund'], {
        cwd: directory,
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    } catch (err) {
      const failure = err as { code?: string; exitCode?: number; shortMessage?: string };
      const why =
        failure.code ??
        (failure.exitCode !== undefined ? `exit code ${failure.exitCode}` : (failure.shortMessage ?? String(err)));
      throw new UsageError(
        `the project was scaffolded, but \`npm install\` failed (${why})`,
        `fix the problem npm reported and run \`npm install\` in ${directory}`,
      );
    }
  }
}
