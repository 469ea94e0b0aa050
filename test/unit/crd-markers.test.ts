import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseMarker, MarkerSyntaxError } from '../../src/generators/markers/grammar.js';
import { celSyntaxProblem, valueForSchema } from '../../src/generators/crd/apply-markers.js';
import { updateCrdKustomization, CRD_KUSTOMIZE_MARKER } from '../../src/generators/manifests.js';
import { pluralize as pluralOf } from '../../src/scaffold/names.js';

const parse = (body: string) => parseMarker(body, 'x.ts', 7);

test('markers: single values keep regex text verbatim, quoted and backticked forms unquote', () => {
  assert.equal(parse('kubebuilder:validation:Pattern=^[a-z]{1,3},x$')?.value, '^[a-z]{1,3},x$');
  assert.equal(parse('kubebuilder:validation:Pattern=`^a"b$`')?.value, '^a"b$');
  assert.equal(parse('kubebuilder:validation:Pattern="^a\\\\d$"')?.value, '^a\\d$');
  assert.equal(parse('kubebuilder:validation:Minimum=-1.5')?.value, -1.5);
  assert.equal(parse('kubebuilder:validation:MaxLength=63')?.value, 63);
});

test('markers: named arguments honour quotes, commas and lists', () => {
  const m = parse('kubebuilder:validation:XValidation:rule="self.a, self.b == \'x,y\'",message="a, b"');
  assert.deepEqual(m?.args, { rule: "self.a, self.b == 'x,y'", message: 'a, b' });
  const r = parse('kubebuilder:rbac:groups="";apps,resources=pods;deployments,verbs=get;list');
  assert.deepEqual(
    (r?.args['groups'] as Array<{ text: string }>).map((g) => g.text),
    ['', 'apps'],
  );
  assert.deepEqual(
    (r?.args['verbs'] as Array<{ text: string }>).map((g) => g.text),
    ['get', 'list'],
  );
  const p = parse('kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`,priority=1');
  assert.deepEqual(p?.args, { name: 'Age', type: 'date', JSONPath: '.metadata.creationTimestamp', priority: 1 });
});

test('markers: flags, foreign markers and errors', () => {
  assert.equal(parse('optional')?.value, true);
  assert.equal(parse('kubebuilder:object:root=true')?.value, true);
  assert.equal(parse('kubebuilder:scaffold:imports'), undefined, 'scaffold markers belong to the scaffolder');
  const error = (body: string): string => {
    try {
      parse(body);
    } catch (err) {
      assert.ok(err instanceof MarkerSyntaxError);
      return err.message;
    }
    return assert.fail(`+${body} should be rejected`);
  };
  assert.match(
    error('kubebuilder:validation:Maxlength=3'),
    /^unknown marker \+kubebuilder:validation:Maxlength: check the spelling/,
  );
  assert.match(error('optional=yes'), /takes no value/);
  assert.match(error('kubebuilder:validation:MinItems=2.5'), /must be an integer, found "2.5"/);
  assert.match(error('kubebuilder:printcolumn:name=Size,type=integer'), /missing the required argument JSONPath=/);
  assert.match(
    error('kubebuilder:resource:scope=Cluster,plural=x'),
    /has no argument "plural": use one of path, shortName/,
  );
  assert.match(error('kubebuilder:validation:XValidation:rule="self.a'), /unterminated " string/);
  assert.match(error('kubebuilder:validation:Minimum'), /needs a value/);
});

test('markers: default values follow the field type', () => {
  assert.equal(valueForSchema({ text: '1.0', quoted: false }, { type: 'string' }), '1.0');
  assert.equal(valueForSchema({ text: '3', quoted: false }, { type: 'integer' }), 3);
  assert.equal(valueForSchema({ text: '3', quoted: true }, { type: 'integer' }), '3');
  assert.deepEqual(valueForSchema({ text: '{a: 1, b: [x]}', quoted: false }, { type: 'object' }), { a: 1, b: ['x'] });
  assert.deepEqual(valueForSchema({ text: '{"a":true}', quoted: false }, { type: 'object' }), { a: true });
});

test('CEL syntax check: balanced brackets and quotes, no trailing operator', () => {
  assert.equal(celSyntaxProblem("self.a.startsWith('(') && size(self.b) > 0"), undefined);
  assert.equal(celSyntaxProblem('self.x in [1, 2]'), undefined);
  assert.match(celSyntaxProblem('size(self.b > 0') ?? '', /unclosed "\("/);
  assert.match(celSyntaxProblem('self.b)') ?? '', /unbalanced "\)"/);
  assert.match(celSyntaxProblem("self.a == 'x") ?? '', /unterminated string literal/);
  assert.match(celSyntaxProblem('self.a &&') ?? '', /ends with an operator/);
  assert.match(celSyntaxProblem('  ') ?? '', /is empty/);
});

test('plural names follow kubebuilder for regular nouns', () => {
  assert.equal(pluralOf('Memcached'), 'memcacheds');
  assert.equal(pluralOf('Policy'), 'policies');
  assert.equal(pluralOf('Gateway'), 'gateways');
  assert.equal(pluralOf('Ingress'), 'ingresses');
  assert.equal(pluralOf('Box'), 'boxes');
});

test('CRD kustomization: new bases go above the scaffold marker, user content stays, re-run is stable', () => {
  const user = [
    'resources:',
    '- bases/a.example.com_as.yaml',
    '- extra/patch-source.yaml',
    CRD_KUSTOMIZE_MARKER,
    '',
    'patches:',
    '- path: patches/webhook.yaml',
    '',
  ].join('\n');
  const once = updateCrdKustomization(user, ['bases/b.example.com_bs.yaml', 'bases/a.example.com_as.yaml']);
  assert.equal(
    once,
    [
      'resources:',
      '- bases/a.example.com_as.yaml',
      '- extra/patch-source.yaml',
      '- bases/b.example.com_bs.yaml',
      CRD_KUSTOMIZE_MARKER,
      '',
      'patches:',
      '- path: patches/webhook.yaml',
      '',
    ].join('\n'),
  );
  assert.equal(updateCrdKustomization(once, ['bases/b.example.com_bs.yaml', 'bases/a.example.com_as.yaml']), once);
  assert.match(
    updateCrdKustomization(undefined, ['bases/x.yaml']),
    /resources:\n- bases\/x\.yaml\n# \+kubebuilder:scaffold:crdkustomizeresource\n$/,
  );
});
