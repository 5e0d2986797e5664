// Preload (node --import) that makes fetch_url's availability check pass offline: the name it
// looks up to learn whether the web answers (PROBE_HOST in src/tools/web.ts) resolves to loopback,
// and a network interface is up. Pages are then fetched from a local server by address, so a test
// can call fetch_url on a machine without a way out.
import dns from 'node:dns';
import os from 'node:os';
import { syncBuiltinESMExports } from 'node:module';

const PROBE_HOST = 'example.com';
const lookup = dns.promises.lookup;
dns.promises.lookup = (host, ...rest) => (host === PROBE_HOST ? Promise.resolve({ address: '127.0.0.1', family: 4 }) : lookup(host, ...rest));
const interfaces = os.networkInterfaces;
os.networkInterfaces = () => {
  const found = interfaces();
  if (Object.values(found).some((list) => list?.some((address) => !address.internal))) return found;
  return { ...found, test0: [{ address: '192.0.2.1', netmask: '255.255.255.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal: false, cidr: '192.0.2.1/24' }] };
};
// Modules that import these by name (import { lookup } from 'node:dns/promises') see them too.
syncBuiltinESMExports();
