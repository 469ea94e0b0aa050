import type { CertificatePair } from './certwatcher.js';

/**
 * A throwaway self-signed serving certificate for `localhost` and the
 * loopback addresses, made in memory: what controller-runtime's secure
 * metrics server serves when no cert dir is given. Scrapers then skip
 * verification (the ServiceMonitor's `insecureSkipVerify`) or, better, a
 * cert-manager certificate is mounted (`metrics.certDir`).
 *
 * The X.509 encoder is the one envtest uses (@peculiar/x509, a regular
 * dependency: the generated Dockerfile's `npm ci --omit=optional` keeps it,
 * since the scaffold's default deployment serves metrics this way); it is
 * loaded only on this path, so an operator with its own certificate never loads it.
 */
export async function selfSignedCertificate(): Promise<CertificatePair> {
  let TinyCA: typeof import('./ca.js').TinyCA;
  try {
    ({ TinyCA } = await import('./ca.js'));
  } catch (err) {
    throw new Error(
      `cannot make a self-signed metrics certificate (${(err as Error).message}): reinstall the dependencies (npm ci) so @peculiar/x509 is present, or pass metrics.certDir`,
      { cause: err },
    );
  }
  const ca = await TinyCA.create('ts-operator-sdk-metrics-ca');
  const serving = await ca.issue({
    usage: 'server',
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
  });
  return { cert: Buffer.from(serving.certPem + ca.certPem), key: Buffer.from(serving.keyPem) };
}
