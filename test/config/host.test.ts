import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseOllamaHost } from '../../src/config/host.js';
import { UsageError } from '../../src/errors.js';
import { runs } from '../support/property.js';
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
    // Ollama's default port follows the scheme as written: only a lower-case http or https changes it.
    ['HTTP://127.0.0.1', 'http://127.0.0.1:11434'],
    ['Http://h', 'http://h:11434'],
    ['HTTPS://h', 'https://h:11434'],
    ['hTTps://h/ollama', 'https://h:11434/ollama'],
    ['HTTPS://h:443', 'https://h:443'],
    ['http://h/a%40b', 'http://h:80/a%40b'], // an "@" a path needs, written as Ollama's proxy reads it
    // A reverse proxy's path prefix is kept.
    ['https://gw.example/ollama/v1', 'https://gw.example:443/ollama/v1'],
    ['http://h:1/', 'http://h:1'],
    // A trailing "/" is not kept: requests go to /x/api/chat, as --explain says.
    ['http://h:1/x/', 'http://h:1/x'],
    ['http://h:1/x//', 'http://h:1/x'],
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
    // The query and the fragment are hidden in every error too, whatever is found wrong first.
    ['htps://gw.example/ollama?api_key=SECRET123', `OLLAMA_HOST "htps://gw.example/ollama…" has the scheme "htps", but Ollama is reached over http or https: ${fix}`],
    ['https://gw.example /ollama?api_key=SECRET123', `OLLAMA_HOST "https://gw.example /ollama…" contains a blank or control character: ${fix}`],
    ['https://gw.example/ollama?api_key=SEC RET123', `OLLAMA_HOST "https://gw.example/ollama…" contains a blank or control character: ${fix}`],
    ['htps://gw.example/ollama#SECRET123', `OLLAMA_HOST "htps://gw.example/ollama…" has the scheme "htps", but Ollama is reached over http or https: ${fix}`],
    // A "/" in a password: what reads as a port and a path is user info, refused and hidden whatever
    // the part before the "/" looks like (Ollama would connect to "admin:2024" and send the rest).
    ['http://user:SECRET/x@h:1/', `OLLAMA_HOST "http://***@h:1/" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://admin:2024/Pa55word-secret@ollama.internal:11434', `OLLAMA_HOST "http://***@ollama.internal:11434" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://user:12345/s3cret@127.0.0.1', `OLLAMA_HOST "http://***@127.0.0.1" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['https://user:1/2/3secret@h/ollama', `OLLAMA_HOST "https://***@h/ollama" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['admin:2024/secret@h:11434', `OLLAMA_HOST "***@h:11434" has user info (name or password before "@"), which argo does not send: ${fix}`],
    [':2024/secret@h', `OLLAMA_HOST "***@h" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://[::1]:2024/secret@h', `OLLAMA_HOST "http://***@h" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://user:2024/secret@', `OLLAMA_HOST "http://***@" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://user:2024/se/cret@h/p@q', `OLLAMA_HOST "http://***@q" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://h:1/a@b', `OLLAMA_HOST "http://***@b" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://user:2024\\secret@h', `OLLAMA_HOST "http://***@h" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://user:2024/secret@h?k=SECRET2', `OLLAMA_HOST "http://***@h…" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['http://u:SECRET1@h/x?k=SECRET2', `OLLAMA_HOST "http://***@h/x…" has user info (name or password before "@"), which argo does not send: ${fix}`],
    ['ftp://u:SECRET1@h#SECRET2', `OLLAMA_HOST "ftp://***@h…" has the scheme "ftp", but Ollama is reached over http or https: ${fix}`],
    // A "?" or "#" in a password: the host part before it may be user info, so it is hidden too.
    ['http://user:pa#SECRET@h', `OLLAMA_HOST "http://***…" has a query string or fragment (after "#", not shown), which an Ollama address never has: ${fix}`],
    ['ftp://user:pa?SECRET@h', `OLLAMA_HOST "ftp://***…" has the scheme "ftp", but Ollama is reached over http or https: ${fix}`],
    // What comes before "://" is shown as the scheme, hidden the same way.
    ['h?k=SECRET://x', `OLLAMA_HOST "h…" has the scheme "h…", but Ollama is reached over http or https: ${fix}`],
    ['user:SECRET@h://x', `OLLAMA_HOST "***@h://x" has the scheme "***@h", but Ollama is reached over http or https: ${fix}`],
  ])('%j → %s', (raw, message) => {
    const error = thrown(() => parseOllamaHost(raw));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(message);
    expect((error as UsageError).message).not.toMatch(/secret|5ecret/i);
  });

  // Each way an address is refused, with a secret in each place one may be. Blanks, controls and the
  // scheme are looked at before user info and a query, the port and the rest after them.
  const SECRET = 'S3CRET';
  const faults = [
    ['blank', 'http://gw.ex ample/p', 'contains a blank or control character'],
    ['control', 'http://gw.example/p\u0007', 'contains a blank or control character'],
    ['scheme', 'htps://gw.example/p', 'has the scheme "htps"'],
    ['port', 'http://gw.example:99999/p', null],
    ['address', 'http://gw.example%zz/p', null],
  ] as const;
  const secrets = [
    ['query', (address: string) => `${address}?api_key=${SECRET}`, 'has a query string or fragment'],
    ['fragment', (address: string) => `${address}#${SECRET}`, 'has a query string or fragment'],
    ['user info', (address: string) => address.replace('gw.', `me:${SECRET}@gw.`), 'has user info'],
    ['user info and query', (address: string) => `${address.replace('gw.', `me:${SECRET}@gw.`)}?k=${SECRET}`, 'has user info'],
    ['"#" in a password', (address: string) => address.replace('gw.', `me:pa#${SECRET}@gw.`), 'has a query string or fragment'],
  ] as const;
  it.each(faults.flatMap(([fault, address, problem]) => secrets.map(([place, put, later]) => [fault, place, put(address), problem ?? later] as const)))(
    '%s, secret in the %s: %j is refused without the secret',
    (_fault, _place, raw, problem) => {
      const { message } = thrown(() => parseOllamaHost(raw)) as UsageError;
      expect(message).toMatch(/^OLLAMA_HOST "[^"]*" /);
      expect(message).toContain(problem);
      expect(message).not.toContain(SECRET);
    },
  );

  it.each([
    ['port', 'http://gw.example:99999/p', 'has the port "99999", not a number from 0 to 65535'],
    ['address', 'http://gw.example%zz/p', 'is not a valid address'],
  ])('the %s fault, found once user info and a query are ruled out, shows all of %j', (_fault, raw, problem) => {
    expect(thrown(() => parseOllamaHost(raw))).toHaveProperty('message', `OLLAMA_HOST ${JSON.stringify(raw)} ${problem}: ${fix}`);
  });

  it('shows no secret put in the user info, query or fragment of any refused address', () => {
    const piece = fc.stringMatching(/^[\w.:/@?#[\] %-]{0,12}$/);
    fc.assert(
      fc.property(fc.constantFrom('', 'http://', 'https://', 'ftp://', 'x?y://'), piece, fc.constantFrom('@', '?', '#', '/?', '/#'), piece, (scheme, head, mark, tail) => {
        // Before an "@" the secret is user info, even with a "/" before it (a password may hold one).
        const raw = mark === '@' ? `${scheme}${head}${SECRET}@${tail}` : `${scheme}${head}${mark}${SECRET}${tail}`;
        const error = (() => {
          try {
            parseOllamaHost(raw);
            return null;
          } catch (caught) {
            return caught;
          }
        })();
        if (error !== null) expect((error as Error).message).not.toContain(SECRET);
      }),
      runs(500),
    );
  });

  it('accepts no address with an "@" in it, wherever it is', () => {
    const piece = fc.stringMatching(/^[\w.:/@?#[\]%-]{0,12}$/);
    fc.assert(
      fc.property(fc.constantFrom('', 'http://', 'https://'), piece, piece, (scheme, head, tail) => {
        expect(() => parseOllamaHost(`${scheme}${head}@${tail}`)).toThrow(UsageError);
      }),
      runs(500),
    );
  });

  it('names where the value came from', () => {
    expect(thrown(() => parseOllamaHost('file:///x', '--host'))).toHaveProperty('message', expect.stringMatching(/^--host "file:\/\/\/x" /) as unknown);
  });
});
