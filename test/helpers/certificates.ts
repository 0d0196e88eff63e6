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
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    ...days,
    '-subj',
    '/CN=chorus-test-ca',
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=127.0.0.1',
  );
  writeFileSync(path.join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    ...days,
    '-extfile',
    'san.cnf',
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'client.key',
    '-out',
    'client.csr',
    '-subj',
    '/CN=chorus',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'client.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'client.pem',
    ...days,
  );
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'stranger.key',
    '-out',
    'stranger.pem',
    ...days,
    '-subj',
    '/CN=stranger',
  );
  const file = (name: string) => path.join(dir, name);
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
