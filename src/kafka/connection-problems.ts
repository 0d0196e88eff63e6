// What a failure to reach the brokers means, in one line that names the setting to look at: the
// start of a role (topics cannot be created) and `chorus doctor` say it, instead of kafkajs' own
// words ("Connection error: …") or a retry loop that never ends. The common mistakes of a managed
// cluster's first configuration: a wrong password, a CA that is not trusted, TLS on one side only,
// a client certificate missing or not trusted.
import type { Config } from '../config.ts';
import { kafkaFailure, type Kafka } from './kafka.ts';

type KafkaConfig = Config['kafka'];

/** The messages and codes of an error and its causes (kafkajs wraps the one that matters). */
function chain(error: unknown): { text: string; name: string } {
  const parts: string[] = [];
  const names: string[] = [];
  const text = (value: unknown) =>
    typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    const { code, type, cause, originalError } = e as Error & Record<string, unknown>;
    parts.push(e.message, text(code), text(type));
    names.push(e.name);
    const next = cause ?? originalError;
    if (next === e) break;
    e = next;
  }
  return { text: parts.join(' | '), name: names.join(' ') };
}

const UNTRUSTED =
  /SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|CERT_UNTRUSTED|self[- ]signed certificate|unable to verify the first certificate/i;

export function describeKafkaProblem(error: unknown, config: KafkaConfig): string {
  const { text, name } = chain(error);
  const at = `the brokers at KAFKA_BROKERS (${config.brokers.join(',')})`;
  const first = error instanceof Error ? error.message : String(error);
  if (/SASLAuthentication|SASL_AUTHENTICATION_FAILED|authentication failed/i.test(`${name} ${text}`))
    return (
      `${at} refused the SASL login of KAFKA_SASL_USERNAME=${config.sasl?.username ?? '(unset)'} ` +
      `(KAFKA_SASL_MECHANISM=${config.sasl?.mechanism ?? 'unset'}): check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`
    );
  if (/UNSUPPORTED_SASL_MECHANISM|unsupported sasl mechanism/i.test(text))
    return `${at} do not take KAFKA_SASL_MECHANISM=${config.sasl?.mechanism}: ask which mechanisms their listener enables`;
  if (/ILLEGAL_SASL_STATE|Unexpected Kafka request of type/i.test(text))
    return `${at} expect no SASL login on this listener: KAFKA_SECURITY_PROTOCOL may be SSL or PLAINTEXT there`;
  if (UNTRUSTED.test(text))
    return config.ssl?.ca
      ? `${at} present a TLS certificate that the authorities in KAFKA_SSL_CA_FILE did not sign`
      : `${at} present a TLS certificate that no trusted authority signed: set KAFKA_SSL_CA_FILE to the CA that did`;
  // A listener that authenticates clients by certificate (mutual TLS) ends the handshake with an alert.
  if (
    /CERTIFICATE_REQUIRED|certificate required|alert number 116|BAD_CERTIFICATE|bad certificate|alert number 42|UNKNOWN_CA|unknown ca|alert number 48|certificate unknown|alert number 46/i.test(
      text,
    )
  )
    return config.ssl?.cert
      ? `${at} refused the client certificate in KAFKA_SSL_CERT_FILE: it must be signed by an authority the listener trusts (ssl.truststore on the broker)`
      : `${at} ask for a client certificate: set KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE`;
  if (/ERR_TLS_CERT_ALTNAME_INVALID|does not match certificate/i.test(text))
    return `${at} present a TLS certificate that does not name the address in KAFKA_BROKERS`;
  if (/CERT_HAS_EXPIRED|certificate has expired/i.test(text))
    return `${at} present an expired TLS certificate`;
  if (
    /wrong version number|before secure TLS connection|EPROTO|packet length too long|ssl3_get_record|tls_get_more_records/i.test(
      text,
    )
  )
    return `${at} do not speak TLS on that port, but KAFKA_SECURITY_PROTOCOL is ${protocolOf(config)}: set it to PLAINTEXT or SASL_PLAINTEXT, or use the TLS listener's port`;
  if (/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH/.test(text))
    return `no broker answers at KAFKA_BROKERS (${config.brokers.join(',')}): start it or correct KAFKA_BROKERS (${first})`;
  if (!config.ssl && /Closed connection|Connection closed|ECONNRESET|timed out|timeout/i.test(text))
    return `${at} closed the connection or did not answer over ${protocolOf(config)}: if the listener takes TLS, set KAFKA_SECURITY_PROTOCOL to SSL or SASL_SSL (${first})`;
  return `Kafka at KAFKA_BROKERS (${config.brokers.join(',')}): ${first}`;
}

export function protocolOf(config: KafkaConfig): string {
  return `${config.sasl ? 'SASL_' : ''}${config.ssl ? 'SSL' : 'PLAINTEXT'}`;
}

/** What stands in the way of the brokers (describeKafkaProblem), or undefined when they answer. */
export async function kafkaProblem(
  kafka: Kafka,
  config: KafkaConfig,
  timeoutMs: number,
): Promise<string | undefined> {
  const failure = await kafkaFailure(kafka, timeoutMs);
  return failure === undefined ? undefined : describeKafkaProblem(failure, config);
}
