import { UsageError } from '../errors.js';

// Mirrors Ollama's envconfig.Host() so OLLAMA_HOST means the same thing to argo as to ollama, except
// that a value Ollama would quietly turn into some other address is refused: credentials in the URL
// (they would be sent to whatever answers), blanks, and schemes other than http and https.
export const DEFAULT_HOST = 'http://127.0.0.1:11434';

const FIX = `use scheme://host:port, e.g. ${DEFAULT_HOST}`;

/** `source` names where the value came from (`OLLAMA_HOST`, `--host`, `host in config.json`). */
export function parseOllamaHost(raw: string | undefined, source = 'OLLAMA_HOST'): string {
  const value = (raw ?? '').trim();
  if (value === '') return DEFAULT_HOST;
  // \p{C}: control and format characters, including C1 and zero-width ones, which would hide in a message.
  if (/[\s\p{C}]/u.test(value)) {
    throw new UsageError(`${source} ${JSON.stringify(value)} contains a blank or control character: ${FIX}`);
  }
  // Ollama reads a bare "ollama.com" as its cloud, over https.
  if (value === 'ollama.com') return 'https://ollama.com:443';
  let scheme = 'http';
  let rest = value;
  let defaultPort = '11434';
  const separator = value.indexOf('://');
  if (separator !== -1) {
    scheme = value.slice(0, separator).toLowerCase();
    rest = value.slice(separator + 3);
    if (scheme === 'http') defaultPort = '80';
    else if (scheme === 'https') defaultPort = '443';
    else throw new UsageError(`${source} ${JSON.stringify(value)} has the scheme "${scheme}", but Ollama is reached over http or https: ${FIX}`);
  }
  const slash = rest.search(/[/?#]/);
  const hostPort = slash === -1 ? rest : rest.slice(0, slash);
  const at = hostPort.lastIndexOf('@');
  if (at !== -1) {
    // The user info may hold a password: the message shows the value without it.
    const shown = value.replace(hostPort, `***${hostPort.slice(at)}`);
    throw new UsageError(`${source} ${JSON.stringify(shown)} has user info (name or password before "@"), which argo does not send: ${FIX}`);
  }
  const path = slash === -1 ? '' : rest.slice(slash);
  let { host, port } = splitHostPort(hostPort);
  if (host === '' || host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  // Ollama falls back to the default port for one it cannot read; that is an address nobody asked for.
  if (port === '') port = defaultPort;
  else if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw new UsageError(`${source} ${JSON.stringify(value)} has the port "${port}", not a number from 0 to 65535: ${FIX}`);
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const url = `${scheme}://${hostPart}:${port}${path === '/' ? '' : path}`;
  if (!URL.canParse(url)) throw new UsageError(`${source} ${JSON.stringify(value)} is not a valid address: ${FIX}`);
  return url;
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
