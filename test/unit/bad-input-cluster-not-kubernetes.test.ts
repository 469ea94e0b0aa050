/**
 * Commands that talk to a cluster, against a kubeconfig whose server answers
 * but is not a Kubernetes API server: a web server's 404 page, a JSON API,
 * one that imitates /version but has no /api, plain text, a login prompt, a
 * plain-HTTP server behind an https:// URL, and servers the kubeconfig cannot
 * name. Fakes stand in for them (../support/fake-api-servers.ts): a real
 * kube-apiserver cannot be one. Each case keeps the contract of
 * ./bad-input.ts and must say that the server is not a Kubernetes API server,
 * instead of "no OLM installation found" or "no such CRD".
 *
 * Cost: 35 to 50 s (one project is scaffolded, 63 CLI runs; 49 s at load 11 on 2 cores).
 * Run: node --test dist/test/unit/bad-input-cluster-not-kubernetes.test.js
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { badInputSuite } from './bad-input.js';
import { casesFor, literal, userDirectory } from './bad-input-cluster.js';
import { SCENARIOS, scaffoldScenario } from '../scaffold/harness.js';
import { fakeKubeconfig, startFakeServers, type FakeServerKind } from '../support/fake-api-servers.js';

const fakes = await startFakeServers();
after(() => fakes.stop());

/** init + create api cache/v1 Memcached, where create api --from-cluster runs. */
let project: string;
before(() => {
  project = scaffoldScenario(SCENARIOS[0]!, { extraInitArgs: ['--skip-install'] });
});

/** The line for a server of `kind` that is not Kubernetes, with what gave it away. */
function notKubernetes(kind: FakeServerKind, why: string): RegExp {
  return new RegExp(
    `^Error: the server at ${literal(fakes.url(kind))} is not a Kubernetes API server \\(${why}\\)\\. Point (--kubeconfig or )?KUBECONFIG at your cluster's kubeconfig \\(kubectl config view --minify shows the server it uses\\)\\.$`,
  );
}

const tlsToPlain = fakes.url('html404', 'https');
/** A kubeconfig file with `text`, for kubeconfigs fakes.kubeconfig would not write. */
function writeKubeconfig(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'ts-operator-sdk-kubeconfig-')), 'config');
  writeFileSync(file, text);
  return file;
}

badInputSuite(
  'a server that is not a Kubernetes API server: one line saying so',
  [
    ...casesFor(
      'a web server (404, HTML)',
      fakes.kubeconfig(fakes.url('html404')),
      notKubernetes('html404', 'GET /version answered HTTP 404'),
      () => project,
    ),
    ...casesFor(
      'a JSON API without /version',
      fakes.kubeconfig(fakes.url('jsonNoVersion')),
      notKubernetes('jsonNoVersion', 'GET /version answered JSON without a gitVersion'),
      () => project,
    ),
    ...casesFor(
      '/version but no /api',
      fakes.kubeconfig(fakes.url('versionNoApi')),
      notKubernetes('versionNoApi', 'GET /api answered HTTP 404'),
      () => project,
    ),
    ...casesFor(
      'plain text',
      fakes.kubeconfig(fakes.url('text')),
      notKubernetes('text', 'GET /version answered with a body that is not JSON'),
      () => project,
    ),
    ...casesFor(
      'a login prompt (401 without a Kubernetes Status)',
      fakes.kubeconfig(fakes.url('basicAuth')),
      notKubernetes('basicAuth', 'GET /version answered HTTP 401'),
      () => project,
    ),
    ...casesFor(
      'plain HTTP behind an https:// URL',
      fakes.kubeconfig(tlsToPlain),
      new RegExp(
        `^Error: cannot open a TLS connection to the server at ${literal(tlsToPlain)} \\(.+\\)\\. Check the server's URL in the kubeconfig \\(https:// or http://\\) and that it is the API server\\.$`,
      ),
      () => project,
    ),
  ],
  userDirectory,
);

const ftpServer = writeKubeconfig(fakeKubeconfig('ftp://127.0.0.1:21'));
const notAUrl = writeKubeconfig(fakeKubeconfig('https://127.0.0.1:notaport'));
const noContext = writeKubeconfig(fakeKubeconfig('https://127.0.0.1:6443').replace('current-context: fake\n', ''));

badInputSuite(
  'a kubeconfig whose server cannot be reached as named: one line saying so',
  [
    ...casesFor(
      'an ftp:// server',
      ftpServer,
      /^Error: the kubeconfig's cluster "fake" has server "ftp:\/\/127\.0\.0\.1:21", which is not an https:\/\/ or http:\/\/ URL\. /,
      () => project,
    ),
    ...casesFor(
      'a server that is not a URL',
      notAUrl,
      /^Error: the kubeconfig's cluster "fake" has server "https:\/\/127\.0\.0\.1:notaport", which is not a URL\. /,
      () => project,
    ),
    ...casesFor(
      'no current context',
      noContext,
      /kubeconfig \/\S+ has no current-context\b.*[Ss]et one with `kubectl config use-context NAME`/,
      () => project,
    ),
  ],
  userDirectory,
);
