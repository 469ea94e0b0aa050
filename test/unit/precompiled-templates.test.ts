import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import Handlebars from 'handlebars';
import { PRECOMPILED_MODULE, precompiledTemplatesModule, TEMPLATE_OPTIONS } from '../../src/scaffold/precompile.js';
import { renderTemplate, TEMPLATES_ROOT } from '../../src/scaffold/render.js';

// The CLI renders the templates the build precompiled; a template edited, added or removed since must not go unseen.
test('the precompiled templates the CLI loads are templates/**/*.hbs as they are now', () => {
  assert.equal(
    readFileSync(PRECOMPILED_MODULE, 'utf8'),
    precompiledTemplatesModule(),
    `${PRECOMPILED_MODULE} is stale against ${TEMPLATES_ROOT}: run npm run build`,
  );
});

test('a precompiled template renders what Handlebars compiling its source renders', () => {
  const template = 'init/config/manifests/kustomization.yaml.hbs';
  const source = readFileSync(new URL(template, `file://${TEMPLATES_ROOT}`), 'utf8');
  const data = { projectName: 'a<b>&"c"' };
  assert.equal(renderTemplate(template, data), Handlebars.compile(source, TEMPLATE_OPTIONS)(data));
  assert.ok(renderTemplate(template, data).includes('a<b>&"c"'), 'nothing is HTML-escaped');
});

test('a variable missing from the data still throws (strict), as an unknown template does', () => {
  assert.throws(() => renderTemplate('init/config/manifests/kustomization.yaml.hbs', {}), /"projectName" not defined/);
  assert.throws(() => renderTemplate('init/no-such-file.hbs', {}), /no template init\/no-such-file\.hbs/);
});
