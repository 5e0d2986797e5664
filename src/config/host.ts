import { UsageError } from '../errors.js';

// Mirrors Ollama's envconfig.Host() so OLLAMA_HOST means the same thing to argo as to ollama, except
// that a value Ollama would quietly turn into some other address is refused: credentials in the URL
// (they would be sent to whatever answers), blanks, schemes other than http and https, and a query
// string or fragment (Ollama drops them). A path is kept (a reverse proxy's prefix). No error shows
// the user info or the query: each may hold a secret, and errors are printed and logged.
export const DEFAULT_HOST = 'http://127.0.0.1:11434';

const FIX = `use scheme://host:port, e.g. ${DEFAULT_HOST}`;

/** `source` names where the value came from (`OLLAMA_HOST`, `--host`, `host in config.json`). */
export function parseOllamaHost(raw: string | undefined, source = 'OLLAMA_HOST'): string {
  const value = (raw ?? '').trim();
  if (value === '') return DEFAULT_HOST;
  const shown = JSON.stringify(withoutUserInfo(value));
  // \p{C}: control and format characters, including C1 and zero-width ones, which would hide in a message.
  if (/[\s\p{C}]/u.test(value)) {
    throw new UsageError(`${source} ${shown} contains a blank or control character: ${FIX}`);
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
    else throw new UsageError(`${source} ${shown} has the scheme "${scheme}", but Ollama is reached over http or https: ${FIX}`);
  }
  const slash = rest.search(/[/?#]/);
  const hostPort = slash === -1 ? rest : rest.slice(0, slash);
  if (hostPort.includes('@')) throw new UsageError(`${source} ${shown} has user info (name or password before "@"), which argo does not send: ${FIX}`);
  const path = slash === -1 ? '' : rest.slice(slash);
  const query = path.search(/[?#]/);
  if (query !== -1) {
    const before = JSON.stringify(`${value.slice(0, value.length - path.length + query)}…`);
    throw new UsageError(`${source} ${before} has a query string or fragment (after "${path.charAt(query)}", not shown), which an Ollama address never has: ${FIX}`);
  }
  let { host, port } = splitHostPort(hostPort);
  if (host === '' || host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  // Ollama falls back to the default port for one it cannot read; that is an address nobody asked for.
  if (port === '') port = defaultPort;
  else if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) throw new UsageError(`${source} ${shown} has the port "${port}", not a number from 0 to 65535: ${FIX}`);
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const url = `${scheme}://${hostPart}:${port}${path === '/' ? '' : path}`;
  if (!URL.canParse(url)) throw new UsageError(`${source} ${shown} is not a valid address: ${FIX}`);
  return url;
}

/** `value` with the user info before an "@" in its host part shown as ***: it may hold a password. */
function withoutUserInfo(value: string): string {
  const separator = value.indexOf('://');
  const start = separator === -1 ? 0 : separator + 3;
  const end = value.slice(start).search(/[/?#]/);
  const at = value.lastIndexOf('@', end === -1 ? value.length : start + end);
  return at < start ? value : `${value.slice(0, start)}***${value.slice(at)}`;
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
