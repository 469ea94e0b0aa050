import { readFileSync } from 'node:fs';

/** This package's own package.json fields that scaffolding needs. */
export interface PackageInfo {
  name: string;
  version: string;
}

/** Read once from the package root (dist/src/scaffold → ../../../package.json). */
export const packageInfo: PackageInfo = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as PackageInfo;

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

/** The scorecard test image matching the operator-sdk release we mirror. */
export const SCORECARD_IMAGE = 'quay.io/operator-framework/scorecard-test:v1.42.3';
