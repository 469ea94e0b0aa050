/**
 * The registry format check (operator-registry `ValidateBundleFormat`): the
 * manifests/ and metadata/ directories, the annotations file and its required
 * keys. operator-sdk reports all of them as one error line.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ANNOTATION, readYamlDocuments, REGISTRY_V1, type LoadedBundle } from './bundle-loader.js';
import { leafText } from './documents.js';

/** Annotation keys every bundle must carry, in the order problems are reported. */
const REQUIRED_ANNOTATIONS = [
  ANNOTATION.mediatype,
  ANNOTATION.manifests,
  ANNOTATION.metadata,
  ANNOTATION.package,
  ANNOTATION.channels,
] as const;

/**
 * Returns the format problems of the bundle at `root`, or an empty list.
 * The directories are looked up by their fixed names, as the registry does.
 */
export function bundleFormatProblems(root: string, cwd: string): string[] {
  const problems: string[] = [];
  const isDir = (path: string): boolean => existsSync(path) && statSync(path).isDirectory();
  const manifestsDir = join(root, 'manifests');
  const metadataDir = join(root, 'metadata');
  if (!isDir(manifestsDir)) problems.push('Unable to locate manifests directory');
  if (!isDir(metadataDir)) problems.push('Unable to locate metadata directory');
  if (problems.length > 0) return problems;

  const mediaType = readdirSync(manifestsDir).some((file) => file === 'Chart.yaml') ? 'helm' : REGISTRY_V1;
  let annotations: Record<string, unknown> | undefined;
  for (const file of readdirSync(metadataDir).sort()) {
    const path = join(metadataDir, file);
    // A symlink loop or an unreadable entry is not an annotations file; the loader already read the real one.
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) continue;
    const doc = readYamlDocuments(path, cwd)[0];
    const found = typeof doc === 'object' && doc !== null && 'annotations' in doc ? doc.annotations : undefined;
    if (found && typeof found === 'object') {
      annotations = found as Record<string, unknown>;
      break;
    }
  }
  if (!annotations) {
    problems.push('Could not find annotations file');
    return problems;
  }
  for (const key of REQUIRED_ANNOTATIONS) {
    const present = key in annotations;
    const value = present && annotations[key] !== null ? leafText(annotations[key]) : '';
    if (!present) problems.push(`Missing annotation ${JSON.stringify(key)}`);
    if (key === ANNOTATION.mediatype && value !== mediaType) {
      problems.push(
        `Expecting annotation ${JSON.stringify(key)} to have value ${JSON.stringify(mediaType)} instead of ${JSON.stringify(value)}`,
      );
    }
    if (key === ANNOTATION.channels && present && value.trim() === '') {
      problems.push(`Expecting annotation ${JSON.stringify(key)} to have non-empty value`);
    }
  }
  if (
    ANNOTATION.defaultChannel in annotations &&
    leafText(annotations[ANNOTATION.defaultChannel] ?? '').trim() === ''
  ) {
    problems.push(`Expecting annotation ${JSON.stringify(ANNOTATION.defaultChannel)} to have non-empty value`);
  }
  return problems;
}

/** The single output line operator-sdk prints for format problems, or undefined when there are none. */
export function formatErrorLine(
  bundle: Pick<LoadedBundle, 'directory'>,
  root: string,
  cwd: string,
): string | undefined {
  const problems = bundleFormatProblems(root, cwd);
  if (problems.length === 0) return undefined;
  return `error validating format in ${bundle.directory}: Bundle validation errors: ${problems.join(',')}`;
}
