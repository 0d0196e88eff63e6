// A certificate authority of a test's own, a server certificate it signed for 127.0.0.1 (and
// localhost) and a client certificate it signed, made with openssl: for servers that take TLS as
// managed ones do, some of them authenticating clients by certificate (mutual TLS).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface Certificates {
  /** The CA's certificate (PEM): what a client trusts. */
  ca: string;
  /** The server's certificate and its unencrypted key (PEM). */
  cert: string;
  key: string;
  /** The key and the certificate in one PEM file (Kafka's PEM key store). */
  keystore: string;
  /** A client's certificate the CA signed, and its unencrypted key (PEM). */
  client: { cert: string; key: string };
  /** A client certificate no authority signed (its own), and its key. */
  selfSignedClient: { cert: string; key: string };
}

export function makeCertificates(dir: string): Certificates {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const days = ['-days', '2'];
  const file = (name: string) => path.join(dir, name);
  /** A new RSA key in `<name>.key`, for `openssl req`. */
  const newKey = (name: string) => ['-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`];
  /** `<name>.key` and `<name>.pem`, a certificate signed by its own key. */
  const selfSigned = (name: string, subject: string) =>
    openssl('req', '-x509', ...newKey(name), '-out', `${name}.pem`, ...days, '-subj', subject);
  /** `<name>.key` and `<name>.pem`, a certificate the CA signed (with the extensions in `extfile`). */
  const signedByCa = (name: string, subject: string, extfile?: string) => {
    openssl('req', ...newKey(name), '-out', `${name}.csr`, '-subj', subject);
    const extensions = extfile ? ['-extfile', extfile] : [];
    const ca = ['-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial'];
    openssl('x509', '-req', '-in', `${name}.csr`, ...ca, '-out', `${name}.pem`, ...days, ...extensions);
  };
  selfSigned('ca', '/CN=chorus-test-ca');
  writeFileSync(file('san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  signedByCa('server', '/CN=127.0.0.1', 'san.cnf');
  signedByCa('client', '/CN=chorus');
  selfSigned('stranger', '/CN=stranger');
  writeFileSync(
    file('keystore.pem'),
    readFileSync(file('server.key'), 'utf8') + readFileSync(file('server.pem'), 'utf8'),
  );
  return {
    ca: file('ca.pem'),
    cert: file('server.pem'),
    key: file('server.key'),
    keystore: file('keystore.pem'),
    client: { cert: file('client.pem'), key: file('client.key') },
    selfSignedClient: { cert: file('stranger.pem'), key: file('stranger.key') },
  };
}
