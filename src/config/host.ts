// Mirrors Ollama's envconfig.Host() so OLLAMA_HOST means the same thing to argo as to ollama.
export const DEFAULT_HOST = 'http://127.0.0.1:11434';

export function parseOllamaHost(raw: string | undefined): string {
  const value = (raw ?? '').trim();
  if (value === '') return DEFAULT_HOST;
  let scheme = 'http';
  let rest = value;
  let defaultPort = '11434';
  const separator = value.indexOf('://');
  if (separator !== -1) {
    scheme = value.slice(0, separator).toLowerCase();
    rest = value.slice(separator + 3);
    if (scheme === 'http') defaultPort = '80';
    else if (scheme === 'https') defaultPort = '443';
  }
  const slash = rest.indexOf('/');
  const hostPort = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? '' : rest.slice(slash);
  let { host, port } = splitHostPort(hostPort);
  if (host === '' || host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  const portNumber = Number(port);
  if (port === '' || !Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535) port = defaultPort;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return `${scheme}://${hostPart}:${port}${path === '/' ? '' : path}`;
}

function splitHostPort(hostPort: string): { host: string; port: string } {
  const bracketed = /^\[([^\]]*)\](?::(.*))?$/.exec(hostPort);
  if (bracketed) return { host: bracketed[1] ?? '', port: bracketed[2] ?? '' };
  const colons = hostPort.split(':').length - 1;
  if (colons === 1) {
    const [host = '', port = ''] = hostPort.split(':');
    return { host, port };
  }
  // A bare IPv6 address (several colons, no brackets) has no port.
  return { host: hostPort, port: '' };
}
