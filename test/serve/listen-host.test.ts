// An IPv6 address has many spellings; the URL argo serve prints, and a Host header in any of them,
// reach the app (the adapter matches a Host against the URL spelling of it).
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBindHost } from '../../src/cli/serve.js';
import { listen, urlIpv6 } from '../../src/serve/listen.js';
import type { Listening } from '../../src/serve/listen.js';
import { startTestServer } from './fake-runner.js';
import type { TestServer } from './fake-runner.js';

/** The status of GET /health sent to `url` with `host` as its Host header. */
function healthWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/health`, { headers: { host } }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('urlIpv6', () => {
  it.each([
    ['::1', '::1'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['::ffff:127.0.0.1', '::ffff:7f00:1'],
    ['::FFFF:7F00:1', '::ffff:7f00:1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    // A zone no URL takes: left as given.
    ['fe80::1%eth0', 'fe80::1%eth0'],
  ])('%s → %s', (address, spelled) => {
    expect(urlIpv6(address)).toBe(spelled);
  });
});

describe('argo serve on an IPv6 spelling', () => {
  let t: TestServer;
  let mapped: Listening;
  beforeAll(async () => {
    t = await startTestServer();
    mapped = await listen(t.server, parseBindHost('::ffff:127.0.0.1'), 0);
  });
  afterAll(async () => {
    await mapped.close(1000);
    await t.listening.close(1000);
  });

  it('--host ::ffff:127.0.0.1 prints the URL spelling, and a request to it is answered', async () => {
    expect(mapped.url).toMatch(/^http:\/\/\[::ffff:7f00:1\]:\d+$/);
    expect((await fetch(`${mapped.url}/health`)).status).toBe(200);
  });

  it.each([
    ['[::ffff:127.0.0.1]', 200],
    ['[::FFFF:7F00:1]:8080', 200],
    ['[::ffff:7f00:1]', 200],
    ['127.0.0.1', 200],
    ['[not an address]', 400],
  ])('Host %s on a 127.0.0.1 bind → %i', async (host, status) => {
    expect(await healthWithHost(t.url, host)).toBe(status);
  });
});
