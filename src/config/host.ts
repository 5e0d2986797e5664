import { UsageError } from '../errors.js';

// Mirrors Ollama's envconfig.Host() so OLLAMA_HOST means the same thing to argo as to ollama, except
// that a value Ollama would quietly turn into some other address is refused: credentials in the URL
// (they would be sent to whatever answers), an "@" in the path (it may end a password holding a "/"),
// blanks, schemes other than http and https, and a query string or fragment (Ollama drops them). A
// path is kept (a reverse proxy's prefix). No error shows the user info, the query or the fragment
// (shownAddress): each may hold a secret, and errors are printed and logged.
export const DEFAULT_HOST = 'http://127.0.0.1:11434';

const FIX = `use scheme://host:port, e.g. ${DEFAULT_HOST}`;

/** `source` names where the value came from (`OLLAMA_HOST`, `--host`, `host in config.json`). */
export function parseOllamaHost(raw: string | undefined, source = 'OLLAMA_HOST'): string {
  const value = (raw ?? '').trim();
  if (value === '') return DEFAULT_HOST;
  const shown = JSON.stringify(shownAddress(value));
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
    const written = value.slice(0, separator);
    scheme = written.toLowerCase();
    rest = value.slice(separator + 3);
    // Ollama picks the default port by the scheme as written (HTTP:// keeps 11434), then Go's URL
    // parser lower-cases it: the same address here.
    if (written === 'http') defaultPort = '80';
    else if (written === 'https') defaultPort = '443';
    else if (scheme !== 'http' && scheme !== 'https') throw new UsageError(`${source} ${shown} has the scheme ${JSON.stringify(shownAddress(scheme))}, but Ollama is reached over http or https: ${FIX}`);
  }
  // An "@" anywhere before a query may end user info: a password can hold a "/" (http://me:2024/pw@h),
  // and Ollama would then take "2024" as the port and send the password as the path.
  if (/^[^?#]*@/.test(rest)) {
    throw new UsageError(`${source} ${shown} has user info (name or password before "@"), which argo does not send: ${FIX}`);
  }
  const slash = rest.search(/[/?#]/);
  const hostPort = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? '' : rest.slice(slash);
  const query = path.search(/[?#]/);
  if (query !== -1) {
    throw new UsageError(`${source} ${shown} has a query string or fragment (after "${path.charAt(query)}", not shown), which an Ollama address never has: ${FIX}`);
  }
  let { host, port } = splitHostPort(hostPort);
  if (host === '' || host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  // Ollama falls back to the default port for one it cannot read; that is an address nobody asked for.
  if (port === '') port = defaultPort;
  else if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
    // Quoted only when nothing of the address is hidden: "pa" in http://me:pa/ss@h is part of a password.
    const named = shownAddress(value) === value ? `the port "${port}"` : 'a port';
    throw new UsageError(`${source} ${shown} has ${named}, not a number from 0 to 65535: ${FIX}`);
  }
  const hostPart = host.includes(':') ? `[${host}]` : host;
  // Without a trailing "/": "/api/chat" is added to it (Ollama joins the two the same way).
  const url = `${scheme}://${hostPart}:${port}${path.replace(/\/+$/, '')}`;
  if (!URL.canParse(url)) throw new UsageError(`${source} ${shown} is not a valid address: ${FIX}`);
  return url;
}

/**
 * `value` as a message shows it: anything from the first "?" or "#" on cut to "…", and the user info
 * before an "@" in the host part as ***. Either may hold a secret, whatever else is wrong with the value.
 */
function shownAddress(value: string): string {
  const cut = value.search(/[?#]/);
  const kept = cut === -1 ? value : value.slice(0, cut);
  const tail = cut === -1 ? '' : '…';
  const separator = kept.indexOf('://');
  const start = separator === -1 ? 0 : separator + 3;
  const slash = kept.indexOf('/', start);
  // A password may hold a "?" or "#" (http://user:pa#ss@h): an "@" past the cut, still before any
  // "/", makes the whole host part kept user info.
  if (slash === -1 && cut !== -1 && /^[^/]*@/.test(value.slice(cut))) return `${kept.slice(0, start)}***${tail}`;
  // Or a "/" (http://user:pa/ss@h): any "@" before the cut may end user info, even in a path.
  const at = kept.lastIndexOf('@');
  if (at === -1) return `${kept}${tail}`;
  // An "@" before the "://" (user:pw@h://x) is hidden with what comes before it, scheme and all.
  return `${at < start ? '' : kept.slice(0, start)}***${kept.slice(at)}${tail}`;
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
