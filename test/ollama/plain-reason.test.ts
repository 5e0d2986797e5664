import { describe, expect, it } from 'vitest';
import { plainReason } from '../../src/ollama/plain-reason.js';

const withCause = (code: string, message = 'fetch failed') => Object.assign(new TypeError(message), { cause: Object.assign(new Error('x'), { code }) });
// As fetch rejects on a TLS failure: OpenSSL's words are the cause's message.
const eproto = (message: string) => Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(message), { code: 'EPROTO' }) });

describe('plainReason', () => {
  it.each<[unknown, string]>([
    [withCause('ECONNREFUSED'), 'connection refused: nothing listens there'],
    [withCause('UND_ERR_SOCKET'), 'the connection dropped'],
    [withCause('ENOTFOUND'), 'the host name cannot be found'],
    [withCause('SOMETHING_NEW'), 'no answer'],
    // What Node's fetch rejects with when the answer is no HTTP (an SSH server, a database on that port).
    [withCause('HPE_INVALID_CONSTANT', 'Response does not match the HTTP/1.1 protocol (Expected HTTP/)'), "something answers there, but not in HTTP: is that port Ollama's?"],
    [withCause('HPE_INVALID_CONTENT_LENGTH'), "something answers there, but not in HTTP: is that port Ollama's?"],
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
    // EPROTO is any failure OpenSSL names: only "wrong version number" means plain HTTP.
    [eproto('C0:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../ssl3_record.c:350:\n'), 'it answers in plain HTTP, not HTTPS: use http:// in the address'],
    [eproto('C0:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure:../rec_layer_s3.c:1605:SSL alert number 40\n'),
      'the TLS handshake failed (sslv3 alert handshake failure): check that the address and port are those of an HTTPS server that accepts this client'],
    [eproto('C0:error:0A00042E:SSL routines::tlsv1 alert protocol version:../rec_layer_s3.c:1605\n'),
      'the TLS handshake failed (tlsv1 alert protocol version): check that the address and port are those of an HTTPS server that accepts this client'],
    [eproto('write EPROTO'), 'the TLS handshake failed: check that the address and port are those of an HTTPS server that accepts this client'],
    [new Error('model is required'), 'model is required'],
    [null, 'no answer'],
    [new DOMException('The operation was aborted due to timeout', 'TimeoutError'), 'no answer in time'],
  ])('%#: %s', (error, words) => {
    expect(plainReason(error)).toBe(words);
  });
});
