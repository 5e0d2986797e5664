import { describe, expect, it } from 'vitest';
import { plainReason } from '../../src/ollama/plain-reason.js';

const withCause = (code: string, message = 'fetch failed') => Object.assign(new TypeError(message), { cause: Object.assign(new Error('x'), { code }) });

describe('plainReason', () => {
  it.each<[unknown, string]>([
    [withCause('ECONNREFUSED'), 'connection refused: nothing listens there'],
    [withCause('UND_ERR_SOCKET'), 'the connection dropped'],
    [withCause('ENOTFOUND'), 'the host name cannot be found'],
    [withCause('SOMETHING_NEW'), 'no answer'],
    [new TypeError('fetch failed'), 'no answer'],
    [Object.assign(new TypeError('fetch failed'), { cause: new TypeError('bad port') }), 'HTTP clients refuse that port; run Ollama on another one'],
    [Object.assign(new Error('x'), { code: 'ECONNRESET' }), 'the connection was reset'],
    [withCause('EMFILE'), 'argo has too many files open: raise its limit with ulimit -n'],
    [withCause('ENFILE'), 'the system has too many files open'],
    ...(['DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'].map(
      (code) => [withCause(code), 'its TLS certificate is not trusted here: if it is yours, name it (or its CA) with NODE_EXTRA_CA_CERTS=file.pem'] as [unknown, string],
    )),
    [withCause('CERT_HAS_EXPIRED'), 'its TLS certificate has expired: renew it on the server'],
    [withCause('CERT_NOT_YET_VALID'), 'its TLS certificate is not valid yet: check the clocks of both machines'],
    [withCause('ERR_TLS_CERT_ALTNAME_INVALID'), 'its TLS certificate is for another host name: use the name it was made for in the address'],
    [withCause('ERR_SSL_WRONG_VERSION_NUMBER'), 'it answers in plain HTTP, not HTTPS: use http:// in the address'],
    [withCause('EPROTO'), 'it answers in plain HTTP, not HTTPS: use http:// in the address'],
    [new Error('model is required'), 'model is required'],
    [null, 'no answer'],
    [new DOMException('The operation was aborted due to timeout', 'TimeoutError'), 'no answer in time'],
  ])('%#: %s', (error, words) => {
    expect(plainReason(error)).toBe(words);
  });
});
