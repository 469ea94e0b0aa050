import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { UsageError } from '../errors.js';

/** This package's own package.json fields that scaffolding needs. */
export interface PackageInfo {
  name: string;
  version: string;
  /** The CLI's dependencies, which an operator image may omit (main.ts names a missing one). */
  optionalDependencies?: Record<string, string>;
}

/** Read once from the package root (dist/src/scaffold → ../../../package.json). */
export const packageInfo: PackageInfo = JSON.parse(
  readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
) as PackageInfo;

/** Environment variable that overrides the ts-operator-sdk dependency of generated projects. */
export const PACKAGE_SPEC_VARIABLE = 'TS_OPERATOR_SDK_PACKAGE_SPEC';

/**
 * The version spec generated projects depend on: `^<this version>`, or
 * `$TS_OPERATOR_SDK_PACKAGE_SPEC` (e.g. `file:/tmp/ts-operator-sdk-0.1.0.tgz`)
 * so a project can be tested against an unpublished build.
 */
export function sdkPackageSpec(env: NodeJS.ProcessEnv = process.env): string {
  return env[PACKAGE_SPEC_VARIABLE] || `^${packageInfo.version}`;
}

/** The project folder that holds a vendored ts-operator-sdk tarball. */
export const VENDOR_DIRECTORY = 'vendor';

/** A ts-operator-sdk tarball copied into a generated project. */
export interface VendoredTarball {
  /** Project-relative path of the copy, e.g. `vendor/ts-operator-sdk-0.1.0.tgz` (also what the Dockerfile COPYs). */
  path: string;
  /** Its bytes. */
  content: Buffer;
  /** The dependency spec that points at the copy: `file:vendor/...`. */
  spec: string;
}

/**
 * For a `file:` spec naming a tarball (`npm pack`'s output), reads it so init
 * can copy it into the project: an image build sees only the project
 * directory, where an absolute path on the host does not exist. Other specs
 * (a version range, a `file:` directory) are left to npm: undefined.
 */
export function vendoredTarball(spec: string, cwd: string = process.cwd()): VendoredTarball | undefined {
  if (!spec.startsWith('file:') || !/\.(tgz|tar\.gz)$/.test(spec)) return undefined;
  const source = resolve(cwd, spec.slice('file:'.length));
  let content: Buffer;
  try {
    content = readFileSync(source);
  } catch (error) {
    throw new UsageError(
      `${PACKAGE_SPEC_VARIABLE}=${spec} names a tarball that cannot be read (${(error as NodeJS.ErrnoException).code})`,
      `point ${PACKAGE_SPEC_VARIABLE} at the .tgz that \`npm pack\` wrote, or unset it to depend on the published ^${packageInfo.version}`,
    );
  }
  const path = `${VENDOR_DIRECTORY}/${basename(source)}`;
  return { path, content, spec: `file:${path}` };
}

/** The scorecard test image matching the operator-sdk release we mirror. */
export const SCORECARD_IMAGE = 'quay.io/operator-framework/scorecard-test:v1.42.3';
