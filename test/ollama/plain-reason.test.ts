import { describe, expect, it } from 'vitest';
import { plainReason } from '../../src/ollama/plain-reason.js';

const withCause = (code: string, message = 'fetch failed') => Object.assign(new TypeError(message), { cause: Object.assign(new Error('x'), { code }) });

describe('plainReason', () => {
  it.each([
    [withCause('ECONNREFUSED'), 'connection refused: nothing listens there'],
    [withCause('UND_ERR_SOCKET'), 'the connection dropped'],
    [withCause('ENOTFOUND'), 'the host name cannot be found'],
    [withCause('SOMETHING_NEW'), 'no answer'],
    [new TypeError('fetch failed'), 'no answer'],
    [Object.assign(new TypeError('fetch failed'), { cause: new TypeError('bad port') }), 'HTTP clients refuse that port; run Ollama on another one'],
    [Object.assign(new Error('x'), { code: 'ECONNRESET' }), 'the connection was reset'],
    [withCause('EMFILE'), 'argo has too many files open: raise its limit with ulimit -n'],
    [withCause('ENFILE'), 'the system has too many files open'],
    [new Error('model is required'), 'model is required'],
    [null, 'no answer'],
    [new DOMException('The operation was aborted due to timeout', 'TimeoutError'), 'no answer in time'],
  ])('%#: %s', (error, words) => {
    expect(plainReason(error)).toBe(words);
  });
});
