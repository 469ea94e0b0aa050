import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Handlebars from 'handlebars';

/**
 * The templates folder of this package. It mirrors the generated tree, so
 * `templates/init/config/default/kustomization.yaml.hbs` renders
 * `config/default/kustomization.yaml`; templates/README.md states the rule.
 */
export const TEMPLATES_ROOT = fileURLToPath(new URL('../../../templates/', import.meta.url));

const compiled = new Map<string, Handlebars.TemplateDelegate>();

/**
 * Renders one template (a path relative to {@link TEMPLATES_ROOT}) with `data`.
 * Output is code and YAML, never HTML, so nothing is escaped.
 */
export function renderTemplate(template: string, data: object): string {
  let render = compiled.get(template);
  if (!render) {
    const source = readFileSync(new URL(template, `file://${TEMPLATES_ROOT}`), 'utf8');
    render = Handlebars.compile(source, { noEscape: true, strict: true });
    compiled.set(template, render);
  }
  return render(data);
}
