/**
 * The APIs of PROJECT that `generate manifests` and `generate kustomize
 * manifests` read types for. Its own module so that `generate kustomize
 * manifests` does not load the CRD generator (and ajv with it) to get a list.
 */
import type { ApiResource } from '../../generators/manifests.js';
import { recordedTypesDir } from '../../scaffold/layout.js';
import type { ProjectConfig } from '../../scaffold/project.js';

/** The APIs of PROJECT that have types in this project (not core or external ones). */
export function apiResourcesOf(project: ProjectConfig): ApiResource[] {
  return (project.resources ?? [])
    .filter((resource) => resource.api && !resource.core && !resource.external)
    .map((resource) => ({
      group: resource.group ?? '',
      domain: resource.domain ?? project.domain ?? '',
      version: resource.version,
      kind: resource.kind,
      plural: resource.plural,
      path: recordedTypesDir(resource, project.multigroup === true),
      namespaced: resource.api?.namespaced === true,
    }));
}
