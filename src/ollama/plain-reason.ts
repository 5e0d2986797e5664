// Pure: network failures in words a user can act on, instead of Node's codes (UND_ERR_SOCKET,
// "fetch failed", "bad port").

const UNTRUSTED = 'its TLS certificate is not trusted here: if it is yours, name it (or its CA) with NODE_EXTRA_CA_CERTS=file.pem';
const PLAIN_HTTP = 'it answers in plain HTTP, not HTTPS: use http:// in the address';

const WORDS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused: nothing listens there',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  ETIMEDOUT: 'the connection timed out',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the network cannot be reached',
  ENOTFOUND: 'the host name cannot be found',
  EAI_AGAIN: 'the host name cannot be looked up right now',
  UND_ERR_SOCKET: 'the connection dropped',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_BODY_TIMEOUT: 'the answer stopped arriving',
  ERR_INVALID_URL: 'the address is not a valid URL',
  ERR_SOCKET_BAD_PORT: 'the port number is not valid',
  // https:// to a server whose certificate Node does not trust (its own, or a private CA's).
  DEPTH_ZERO_SELF_SIGNED_CERT: UNTRUSTED,
  SELF_SIGNED_CERT_IN_CHAIN: UNTRUSTED,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNTRUSTED,
  UNABLE_TO_GET_ISSUER_CERT: UNTRUSTED,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNTRUSTED,
  CERT_HAS_EXPIRED: 'its TLS certificate has expired: renew it on the server',
  CERT_NOT_YET_VALID: 'its TLS certificate is not valid yet: check the clocks of both machines',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate is for another host name: use the name it was made for in the address',
  // https:// to a server that speaks plain HTTP: its first bytes are no TLS record.
  ERR_SSL_WRONG_VERSION_NUMBER: PLAIN_HTTP,
  // No socket could be made: the fault is here, not at Ollama (a server with many clients, a low limit).
  EMFILE: 'argo has too many files open: raise its limit with ulimit -n',
  ENFILE: 'the system has too many files open',
};

/**
 * EPROTO, Node's code for any TLS failure OpenSSL names: plain HTTP for its "wrong version number"
 * (the first bytes were no TLS record), else the reason OpenSSL gave ("SSL routines:fn:reason:file").
 */
function tlsFailure(message: string): string {
  if (/wrong version number/i.test(message)) return PLAIN_HTTP;
  const reason = /SSL routines:[^:]*:([^:\n]+)/.exec(message)?.[1]?.trim();
  return `the TLS handshake failed${reason ? ` (${reason})` : ''}: check that the address and port are those of an HTTPS server that accepts this client`;
}

/** The error (or its cause) in plain words. */
export function plainReason(error: unknown): string {
  const err = error as { name?: unknown; code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } } | null;
  // AbortSignal.timeout's rejection: a request Argo gave up on.
  if (err?.name === 'TimeoutError') return 'no answer in time';
  const code = typeof err?.cause?.code === 'string' ? err.cause.code : typeof err?.code === 'string' ? err.code : undefined;
  if (code !== undefined && Object.hasOwn(WORDS, code)) return WORDS[code] ?? code;
  const message = typeof err?.cause?.message === 'string' ? err.cause.message : typeof err?.message === 'string' ? err.message : '';
  if (code === 'EPROTO') return tlsFailure(message);
  // llhttp's parse errors (HPE_INVALID_CONSTANT, …): what answered there does not speak HTTP, or not as a server must.
  if (code?.startsWith('HPE_') === true) return "something answers there, but not in HTTP: is that port Ollama's?";
  // fetch refuses some ports outright (e.g. 9, 25, 6000): "bad port".
  if (/bad port/i.test(message)) return 'HTTP clients refuse that port; run Ollama on another one';
  if (/invalid port/i.test(message)) return 'the port number is not valid';
  if (message === '' || message === 'fetch failed' || code !== undefined) return 'no answer';
  return message;
}
