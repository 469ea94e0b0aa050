// @peculiar/x509 resolves its ASN.1 services through tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/** ECDSA P-256, the key type controller-runtime's envtest TinyCA uses. */
const KEY_ALGORITHM: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING_ALGORITHM: webcrypto.EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
/** A week, as in envtest: long enough for any test run, short enough to be obviously throwaway. */
const VALIDITY_MS = 7 * 24 * 60 * 60 * 1000;
/** Tolerates small clock differences between this process and the API server. */
const BACKDATE_MS = 60 * 1000;

x509.cryptoProvider.set(webcrypto as ReturnType<typeof x509.cryptoProvider.get>);

/** A certificate and its private key, both PEM encoded. */
export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

/** Who a certificate is for: subject common name plus organizations (Kubernetes groups). */
export interface CertificateSubject {
  commonName: string;
  organizations?: string[];
}

/** What a leaf certificate may be used for and which names it serves. */
export interface LeafCertificateRequest extends CertificateSubject {
  usage: 'client' | 'server';
  dnsNames?: string[];
  ipAddresses?: string[];
}

/**
 * A throwaway certificate authority held in memory. The control plane uses
 * one for client certificates (the API server's `--client-ca-file`), one for
 * its serving certificate, and one for the service-account signer.
 */
export class TinyCA {
  private constructor(
    private readonly keys: webcrypto.CryptoKeyPair,
    private readonly certificate: x509.X509Certificate,
  ) {}

  /** Creates a new self-signed CA whose subject common name is `commonName`. */
  static async create(commonName: string): Promise<TinyCA> {
    const keys = await generateKeyPair();
    const now = Date.now();
    const certificate = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: randomSerial(),
      name: [{ CN: [commonName] }],
      notBefore: new Date(now - BACKDATE_MS),
      notAfter: new Date(now + VALIDITY_MS),
      keys,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.cRLSign,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    return new TinyCA(keys, certificate);
  }

  /** The CA certificate in PEM, for trust bundles and `--client-ca-file`. */
  get certPem(): string {
    return withTrailingNewline(this.certificate.toString('pem'));
  }

  /** The CA's own key pair in PEM, for the service-account signer, which needs the key itself. */
  async ownKeyPair(): Promise<KeyPairPem> {
    return { certPem: this.certPem, keyPem: await privateKeyPem(this.keys.privateKey) };
  }

  /** Issues a leaf certificate signed by this CA, with a fresh key. */
  async issue(request: LeafCertificateRequest): Promise<KeyPairPem> {
    const keys = await generateKeyPair();
    const now = Date.now();
    const subject: x509.JsonName = [{ CN: [request.commonName] }];
    for (const organization of request.organizations ?? []) subject.push({ O: [organization] });
    const extensions: x509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([
        request.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(this.certificate, false),
    ];
    const altNames: x509.JsonGeneralNames = [
      ...(request.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
      ...(request.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
    ];
    if (altNames.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(altNames));
    const certificate = await x509.X509CertificateGenerator.create({
      serialNumber: randomSerial(),
      subject,
      issuer: this.certificate.subjectName,
      notBefore: new Date(now - BACKDATE_MS),
      notAfter: new Date(now + VALIDITY_MS),
      publicKey: keys.publicKey,
      signingKey: this.keys.privateKey,
      signingAlgorithm: SIGNING_ALGORITHM,
      extensions,
    });
    return { certPem: withTrailingNewline(certificate.toString('pem')), keyPem: await privateKeyPem(keys.privateKey) };
  }
}

async function generateKeyPair(): Promise<webcrypto.CryptoKeyPair> {
  return await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify']);
}

async function privateKeyPem(key: webcrypto.CryptoKey): Promise<string> {
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', key);
  return withTrailingNewline(x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'));
}

/** A positive 128-bit serial: the high bit is cleared so DER does not read it as negative. */
function randomSerial(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

/** Go's PEM decoder rejects an END line glued to the next BEGIN, so every block ends its line. */
function withTrailingNewline(pem: string): string {
  return pem.endsWith('\n') ? pem : `${pem}\n`;
}
