import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseBindHost } from '../../src/cli/serve.js';

describe('argo serve --host', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['0.0.0.0', '0.0.0.0'],
    ['::1', '::1'],
    ['[::1]', '::1'],
    ['::', '::'],
    ['localhost', 'localhost'],
    ['my-box.local', 'my-box.local'],
    [' 10.0.0.2 ', '10.0.0.2'],
    // IPv6 in a URL's spelling, the one the printed URL shows and a Host header is matched in.
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['[::FFFF:127.0.0.1]', '::ffff:7f00:1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['FE80::1', 'fe80::1'],
  ])('%j binds %j', (value, host) => {
    expect(parseBindHost(value)).toBe(host);
  });

  // Refused as a usage error, before a key is asked for: a typo is not an address beyond the machine.
  it.each(['bad host', '999.1.1.1', '1.2.3', '', '-box', 'a..b', 'http://127.0.0.1'])('%j is refused', (value) => {
    expect(() => parseBindHost(value)).toThrow(InvalidArgumentError);
  });
});
