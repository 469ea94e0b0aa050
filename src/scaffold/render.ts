import { fileURLToPath } from 'node:url';
import type HandlebarsApi from 'handlebars';
import * as runtime from 'handlebars/runtime.js';
import precompiled from './precompiled-templates.js';

// The runtime only: the templates are compiled at build time (precompile.ts),
// so no run loads the compiler. An import, not createRequire, so the CLI's
// bundle (scripts/bundle-cli.js) holds it instead of loading its ~20 files
// from node_modules. Its own typings declare no exports, so it is typed as
// the full package, whose template() it is.
const Handlebars = (runtime as unknown as { default: typeof HandlebarsApi }).default;

/**
 * The templates folder of this package. It mirrors the generated tree, so
 * `templates/init/config/default/kustomization.yaml.hbs` renders
 * `config/default/kustomization.yaml`; templates/README.md states the rule.
 */
export const TEMPLATES_ROOT = fileURLToPath(new URL('../../../templates/', import.meta.url));

const compiled = new Map<string, HandlebarsApi.TemplateDelegate>();

/**
 * Renders one template (a path relative to {@link TEMPLATES_ROOT}) with `data`.
 * Output is code and YAML, never HTML, so nothing is escaped; a variable the
 * template uses and `data` lacks throws (precompile.ts's TEMPLATE_OPTIONS).
 */
export function renderTemplate(template: string, data: object): string {
  let render = compiled.get(template);
  if (!render) {
    const spec = Object.hasOwn(precompiled, template) ? precompiled[template] : undefined;
    if (!spec)
      throw new Error(`no template ${template} under ${TEMPLATES_ROOT} (was it added after the last npm run build?)`);
    render = Handlebars.template(spec);
    compiled.set(template, render);
  }
  return render(data);
}
