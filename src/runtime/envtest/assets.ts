import { accessSync, constants, statSync } from 'node:fs';
import { join } from 'node:path';

/** Where controller-runtime looks when neither an option nor KUBEBUILDER_ASSETS names a directory. */
export const DEFAULT_BINARY_ASSETS_DIRECTORY = '/usr/local/kubebuilder/bin';

/** The control-plane binaries envtest runs (kubectl is located only on request). */
export type ControlPlaneBinary = 'etcd' | 'kube-apiserver' | 'kubectl';

/** `TEST_ASSET_KUBE_APISERVER` for `kube-apiserver`, as controller-runtime names them. */
export function binaryOverrideVariable(binary: ControlPlaneBinary): string {
  return `TEST_ASSET_${binary.toUpperCase().replace(/-/g, '_')}`;
}

/**
 * Finds a control-plane binary the way controller-runtime does: the
 * per-binary `TEST_ASSET_*` variable wins, then the given directory, then
 * `KUBEBUILDER_ASSETS`, then /usr/local/kubebuilder/bin.
 */
export function locateBinary(binary: ControlPlaneBinary, binaryAssetsDirectory?: string): string {
  const override = process.env[binaryOverrideVariable(binary)];
  if (override) {
    assertExecutable(override, `${binaryOverrideVariable(binary)}=${override}`);
    return override;
  }
  const directory = binaryAssetsDirectory || process.env.KUBEBUILDER_ASSETS || DEFAULT_BINARY_ASSETS_DIRECTORY;
  const path = join(directory, binary);
  const source = binaryAssetsDirectory
    ? 'binaryAssetsDirectory'
    : process.env.KUBEBUILDER_ASSETS
      ? 'KUBEBUILDER_ASSETS'
      : 'the default directory';
  assertExecutable(path, `${source} (${directory})`);
  return path;
}

function assertExecutable(path: string, from: string): void {
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    // reported below with the fix
  }
  if (!isFile) {
    throw new Error(
      `envtest: ${path} not found (from ${from}): set KUBEBUILDER_ASSETS to a directory holding etcd and kube-apiserver, or run \`npx ts-operator-sdk setup-envtest\``,
    );
  }
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(`envtest: ${path} is not executable: run \`chmod +x ${path}\``);
  }
}
