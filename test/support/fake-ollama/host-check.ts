// Host check (allowedHostsMiddleware): only for a loopback-bound server; 403 with no body.
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';


export function isLoopbackAddress(ip: string): boolean {
  const v4 = ip.replace(/^::ffff:/i, '');
  return ip === '::1' || (isIP(v4) === 4 && v4.startsWith('127.'));
}

function isPrivateOrUnspecified(ip: string): boolean {
  const v4 = ip.replace(/^::ffff:/i, '');
  if (isIP(v4) === 4) {
    const [a = 0, b = 0] = v4.split('.').map(Number);
    return a === 10 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) || v4 === '0.0.0.0';
  }
  return ip === '::' || /^f[cd]/i.test(ip);
}

function isInterfaceAddress(ip: string): boolean {
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => i.address === ip));
}

function splitHost(header: string): string {
  const bracketed = /^\[([^\]]+)\](:\d*)?$/.exec(header);
  if (bracketed?.[1]) return bracketed[1];
  const colon = header.lastIndexOf(':');
  return colon >= 0 && header.indexOf(':') === colon ? header.slice(0, colon) : header;
}

export function hostAllowed(header: string | undefined): boolean {
  const host = splitHost(header ?? '').toLowerCase();
  if (isIP(host)) return isLoopbackAddress(host) || isPrivateOrUnspecified(host) || isInterfaceAddress(host);
  return (
    host === '' || host === 'localhost' || host === hostname().toLowerCase() ||
    /\.(localhost|local|internal)$/.test(host)
  );
}

