import { describe, expect, it } from 'vitest';
import { parseOllamaHost } from '../../src/config/host.js';
import { UsageError } from '../../src/errors.js';
import { thrown } from '../support/thrown.js';

// OLLAMA_HOST forms from the protocol notes (envconfig.Host in ollama/ollama).
describe('parseOllamaHost', () => {
  it.each([
    [undefined, 'http://127.0.0.1:11434'],
    ['', 'http://127.0.0.1:11434'],
    ['  ', 'http://127.0.0.1:11434'],
    ['1.2.3.4', 'http://1.2.3.4:11434'],
    ['1.2.3.4:8080', 'http://1.2.3.4:8080'],
    [':5000', 'http://127.0.0.1:5000'],
    ['http://h', 'http://h:80'],
    ['https://h', 'https://h:443'],
    ['ollama.com', 'https://ollama.com:443'],
    ['ollama.com:11434', 'http://ollama.com:11434'],
    ['example.com', 'http://example.com:11434'],
    ['http://ollama.com', 'http://ollama.com:80'],
    ['http://h:1234', 'http://h:1234'],
    ['https://h/ollama', 'https://h:443/ollama'],
    ['example.com', 'http://example.com:11434'],
    ['0.0.0.0', 'http://127.0.0.1:11434'],
    ['0.0.0.0:9999', 'http://127.0.0.1:9999'],
    ['[::1]:11435', 'http://[::1]:11435'],
    ['::1', 'http://[::1]:11434'],
    ['[::1]', 'http://[::1]:11434'], // brackets without a port: the default one
    ['::', 'http://[::1]:11434'], // listen-everywhere becomes loopback, as 0.0.0.0 does
    ['[::]:8080', 'http://[::1]:8080'],
    ['https://[::]', 'https://[::1]:443'],
    ['HTTP://h:1', 'http://h:1'],
    ['http://h/a@b', 'http://h:80/a@b'], // an "@" in the path is not user info
    // A reverse proxy's path prefix is kept.
    ['https://gw.example/ollama/v1', 'https://gw.example:443/ollama/v1'],
    ['http://h:1/', 'http://h:1'],
  ])('%j → %s', (raw, expected) => {
    expect(parseOllamaHost(raw)).toBe(expected);
  });
});

describe('parseOllamaHost refuses what it cannot use safely (usage error, exit 2)', () => {
  const fix = 'use scheme://host:port, e.g. http://127.0.0.1:11434';
  it.each([
    ['http://user:secret@h:11434', `OLLAMA_HOST "http://***@h:11434" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['user@h', `OLLAMA_HOST "***@h" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['https://a@b@h/x', `OLLAMA_HOST "https://***@h/x" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://my host:11434', `OLLAMA_HOST "http://my host:11434" contains a blank or control character: ${fix}`],
    ['h\t:1', `OLLAMA_HOST "h\\t:1" contains a blank or control character: ${fix}`],
    ['h\u001b]52;c;eA==\u0007', `OLLAMA_HOST "h\\u001b]52;c;eA==\\u0007" contains a blank or control character: ${fix}`],
    ['h\u200b', `OLLAMA_HOST "h\u200b" contains a blank or control character: ${fix}`],
    ['file:///etc/passwd', `OLLAMA_HOST "file:///etc/passwd" has the scheme "file", but Ollama is reached over http or https: ${fix}`],
    ['ftp://h', `OLLAMA_HOST "ftp://h" has the scheme "ftp", but Ollama is reached over http or https: ${fix}`],
    ['unix:///run/ollama.sock', `OLLAMA_HOST "unix:///run/ollama.sock" has the scheme "unix", but Ollama is reached over http or https: ${fix}`],
    // Ollama would fall back to its default port for these: an address nobody asked for.
    ['h:notaport', `OLLAMA_HOST "h:notaport" has the port "notaport", not a number from 0 to 65535: ${fix}`],
    ['h:70000', `OLLAMA_HOST "h:70000" has the port "70000", not a number from 0 to 65535: ${fix}`],
    ['http://127.0.0.1:-1', `OLLAMA_HOST "http://127.0.0.1:-1" has the port "-1", not a number from 0 to 65535: ${fix}`],
    ['http://[::1', `OLLAMA_HOST "http://[::1" is not a valid address: ${fix}`],
    // User info is hidden in every error, whatever else is wrong.
    ['ftp://user:pw5ecret@host', `OLLAMA_HOST "ftp://***@host" has the scheme "ftp", but Ollama is reached over http or https: ${fix}`],
    ['http://user:pw5ecret@h :1', `OLLAMA_HOST "http://***@h :1" contains a blank or control character: ${fix}`],
    ['unix://root:secret@/run/ollama.sock', `OLLAMA_HOST "unix://***@/run/ollama.sock" has the scheme "unix", but Ollama is reached over http or https: ${fix}`],
    // A query string or a fragment: refused, and never shown (a key may be in it).
    ['http://127.0.0.1:11998/gw-token?key=q5ecret', `OLLAMA_HOST "http://127.0.0.1:11998/gw-token…" has a query string or fragment (after "?", not shown), which an Ollama address never has: ${fix}`],
    ['http://h:1?x=secret', `OLLAMA_HOST "http://h:1…" has a query string or fragment (after "?", not shown), which an Ollama address never has: ${fix}`],
    ['h#secret', `OLLAMA_HOST "h…" has a query string or fragment (after "#", not shown), which an Ollama address never has: ${fix}`],
    ['https://h/p/?', `OLLAMA_HOST "https://h/p/…" has a query string or fragment (after "?", not shown), which an Ollama address never has: ${fix}`],
    ['http://%zz', `OLLAMA_HOST "http://%zz" is not a valid address: ${fix}`],
  ])('%j → %s', (raw, message) => {
    const error = thrown(() => parseOllamaHost(raw));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(message);
    expect((error as UsageError).message).not.toMatch(/secret|5ecret/);
  });

  it('names where the value came from', () => {
    expect(thrown(() => parseOllamaHost('file:///x', '--host'))).toHaveProperty('message', expect.stringMatching(/^--host "file:\/\/\/x" /) as unknown);
  });
});
