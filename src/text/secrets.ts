// What looks like a secret: the rule that keeps secrets out of commands' environments (tools) and
// out of the tool trace a cron or CI log keeps (cli). Pure, so every layer may use it.
import { MAX_JSON_DEPTH } from './json-depth.js';

/**
 * The words of a variable's name (split at anything but letters and digits, upper-cased: npm's
 * `npm_config_//registry.npmjs.org/:_authToken` is NPM, CONFIG, …, AUTHTOKEN) that say it holds a
 * secret, or several (TOKENS, APP_PASSWORDS, KEYS): TOKEN, SECRET, CREDENTIAL or CRED(S) (DB_CREDS,
 * Jenkins' credentials() variables), a password (PASS, PASSWD, PSWD, PWD, PASSPHRASE, …PASSWORD), a key
 * (KEY, APIKEY, PRIVATEKEY, PRIVKEY, ACCOUNTKEY…), AUTH or AUTHORIZATION, DSN, CONNECTIONSTRING.
 * Whole words, so KEYTIMEOUT, KEYBOARD, AUTHOR, BYPASS, ASKPASS, CREDIT and TOKENIZERS_PARALLELISM
 * are not; nor are counts and kinds of tokens or keys (NOT_A_CREDENTIAL).
 */
const SECRET_WORD =
  /^(?:[A-Z0-9]*TOKENS?|[A-Z0-9]*SECRETS?[A-Z0-9]*|[A-Z0-9]*CREDENTIALS?|[A-Z0-9]*CREDS|CRED|PASS|PASSPHRASES?|[A-Z0-9]*PASSW(?:OR)?DS?|[A-Z0-9]*PWDS?|PSWDS?|(?:[A-Z0-9]*(?:API|PRIVATE|PRIV|ACCESS|ACCOUNT|AUTH|MASTER|SIGNING|ENCRYPTION|SESSION|CLIENT|APP|LICENSE))?KEYS?|[A-Z0-9]*AUTH|AUTHORI[SZ]ATION|DSN|CONNECTIONSTRINGS?)$/;

/**
 * Short words that say so only as the name's last: NETRC_PW, GITHUB_PAT, SESSION_COOKIE, Jenkins'
 * DEPLOY_CREDS_PSW (not Playwright's PW_TEST_…, nor a COOKIE_DOMAIN).
 */
const SECRET_LAST_WORD = /^(?:PWS?|PSWS?|PATS?|[A-Z0-9]*COOKIES?)$/;

/** Two words that say so together: AZURE_STORAGE_CONNECTION_STRING. */
const SECRET_WORDS = /(?:^|_)CONNECTION_STRINGS?(?:_|$)/;

/**
 * A last word that says the variable names where a secret is, or something about it, not the
 * secret (PASSWD_FILE, SSH_AUTH_SOCK, TOKEN_URL, AWS_ACCESS_KEY_ID, TOKEN_COUNT, PASSWORD_MIN_LENGTH,
 * Jenkins' DEPLOY_CREDS_USR): its value is still checked.
 */
const NOT_THE_SECRET = new Set(['FILE', 'FILES', 'PATH', 'DIR', 'SOCK', 'SOCKET', 'URL', 'HOST', 'PORT', 'USER', 'USR', 'USERNAME', 'NAME', 'ID', 'TYPE', 'MODE', 'TIMEOUT', 'COUNT', 'LIMIT', 'LENGTH', 'SIZE']);

/**
 * TOKENS or KEYS that are a number of them or a kind of entry, not credentials, in one word or run
 * of words (joined): a quantity, maybe one word on which (MAX_TOKENS, MAX_NEW_TOKENS, maxTokens,
 * NUM_KEYS, TOTAL_TOKENS), or a key of a table or an ordering (SORT_KEYS, PRIMARY_KEY).
 */
const NOT_A_CREDENTIAL =
  /^(?:(?:MAX|MIN|NUM|TOTAL|COUNT)(?:NEW|INPUT|OUTPUT|COMPLETION|PROMPT|CONTEXT|RESPONSE|PREDICT)?(?:TOKENS?|KEYS?)|(?:SORT|PRIMARY|FOREIGN|UNIQUE|PARTITION|RANGE)KEYS?)$/;

/**
 * TOKENS or KEYS followed by one of these words: a rate or a tally (TOKENS_PER_MINUTE, KEYS_PER_BATCH,
 * TOKENS_USED, TOKENS_REMAINING), not credentials.
 */
const COUNTED = /^(?:TOKENS|KEYS)$/;
const TALLY_WORDS = new Set(['PER', 'USED', 'REMAINING', 'LEFT']);

/** Whether the word at `index` of `words` says it holds a secret: SECRET_WORD, unless it ends a NOT_A_CREDENTIAL run or is COUNTED. */
function secretWord(words: readonly string[], index: number): boolean {
  if (!SECRET_WORD.test(words[index] ?? '')) return false;
  if (COUNTED.test(words[index] ?? '') && TALLY_WORDS.has(words[index + 1] ?? '')) return false;
  return ![0, 1, 2].some((before) => before <= index && NOT_A_CREDENTIAL.test(words.slice(index - before, index + 1).join('')));
}

/** The shell's working directories, whose names end in PWD. */
const SHELL_DIRECTORIES = new Set(['PWD', 'OLDPWD']);

/**
 * Tools' own variables whose words say nothing by the rules above: sshpass's password (SSHPASS),
 * Bitwarden's and 1Password's unlocked sessions (BW_SESSION, OP_SESSION_<account>). SESSION alone
 * is no secret: ARGO_SESSION, DESKTOP_SESSION name one, TERM_SESSION_ID and SESSION_MANAGER place one.
 */
const NAMED_SECRET = /^(?:SSHPASS|BW_SESSION|OP_SESSION_[A-Z0-9_]+)$/;

function secretName(name: string): boolean {
  if (SHELL_DIRECTORIES.has(name)) return false;
  if (NAMED_SECRET.test(name.toUpperCase())) return true;
  const words = name.toUpperCase().split(/[^A-Z0-9]+/).filter((word) => word !== '');
  if (NOT_THE_SECRET.has(words.at(-1) ?? '')) return false;
  return words.some((_word, index) => secretWord(words, index)) || SECRET_LAST_WORD.test(words.at(-1) ?? '') || SECRET_WORDS.test(words.join('_'));
}

/**
 * The start of a webhook URL whose path is its key, up to where the key starts: Slack's, Discord's,
 * Zapier's catch hooks, Microsoft Teams' (`<tenant>.webhook.office.com`, the older
 * `outlook.office.com/webhook/`), IFTTT's Maker (`…/trigger/<event>/with/key/<key>`) and Make's
 * (`hook.<region>.make.com`, once Integromat). A webhook whose key is a query parameter (Teams'
 * Workflows' `&sig=`, Google Chat's `&token=`) is caught by its name (secretInQuery).
 */
const WEBHOOK = String.raw`https://(?:hooks\.slack\.com/(?:services|workflows|triggers)/|(?:discord|discordapp)\.com/api/webhooks/|hooks\.zapier\.com/hooks/catch/|[A-Za-z0-9-]+\.webhook\.office\.com/|outlook\.office(?:365)?\.com/webhook/|maker\.ifttt\.com/trigger/[^/\s"']+/(?:json/)?with/key/|hook\.(?:[a-z0-9]+\.)?(?:make|integromat)\.com/)`;

/**
 * Values that are credentials whatever their variable is called (DATABASE_URL, SLACK_WEBHOOK_URL):
 * a URL with a password (`postgres://user:pw@host/db`, `redis://:pw@host`) or with a key for its
 * user (Sentry's DSN `https://<32 hex>@…`; a plain `ssh://git@host` is not), a webhook URL whose
 * path is its key (WEBHOOK), an HTTP Authorization value (`Bearer …`, `Basic …`), a JSON Web
 * Token, a private key in PEM, or a token in its issuer's documented shape (GitHub, GitLab, Slack,
 * AWS access key id, npm, Stripe live keys, OpenAI and Anthropic keys, Google API keys and OAuth
 * access tokens, Hugging Face, PyPI). Prefixes this specific do not turn up in ordinary values
 * (paths, locales, hosts).
 */
const SECRET_VALUE = new RegExp(
  [
    String.raw`[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s/:@]*:[^\s/@]+@`,
    String.raw`[A-Za-z][A-Za-z0-9+.-]{0,31}://[A-Za-z0-9_-]{16,}@`,
    WEBHOOK,
    String.raw`^\s*(?:[Bb]earer|[Bb]asic)\s+[A-Za-z0-9._~+/=-]{8,}\s*$`,
    String.raw`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.`,
    String.raw`-----BEGIN [A-Z ]*PRIVATE KEY-----`,
    String.raw`\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,}|gl(?:pat|rt|dt|ptt|ft)-[A-Za-z0-9_-]{20,}|xox[abeoprs]-[A-Za-z0-9-]{10,}|A[KS]IA[0-9A-Z]{16}|npm_[A-Za-z0-9]{36}|[rs]k_live_[A-Za-z0-9]{16,}|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{35}|ya29\.[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|pypi-[A-Za-z0-9_-]{50,}|do[opr]_v1_[a-f0-9]{64}|SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}|hv[sbr]\.[A-Za-z0-9_-]{24,})`,
  ].join('|'),
);

/**
 * An HTTP Authorization header with its credentials anywhere in a value, in any case: git's
 * `GIT_CONFIG_VALUE_0='Authorization: Basic …'` (an `http.extraHeader`), a curl option kept in a variable.
 */
const AUTHORIZATION_HEADER = /\b(?:proxy-)?authorization\s*:\s*(?:basic|bearer|token|digest|negotiate|ntlm)\s+[A-Za-z0-9._~+/=-]{8,}/i;

/**
 * A connection string's password or key, in any case: ADO.NET's and JDBC's `…;Password=…`, ODBC's
 * `PWD=…`, Azure's `AccountKey=…` and `SharedAccessKey=…`/`SharedAccessSignature=…`, libpq's
 * `host=db password=…`, a query's `&password=…`.
 */
const CONNECTION_SECRET = /(?:^|[;\s?&])(?:password|pwd|account\s*key|shared\s*access\s*(?:key|signature))\s*=\s*[^;\s&]/i;

/**
 * The last word of a URL's query parameter that holds the URL's signature, a credential for what it
 * signs: Azure's shared access signature (`sig`), S3's and Cloud Storage's presigned URLs
 * (`X-Amz-Signature`, `X-Goog-Signature`), CloudFront's (`Signature`). Only in a URL's query: a
 * signature elsewhere (`SIGNATURE_FILE`, a commit's) is no secret.
 */
const URL_SIGNATURE = /^(?:SIG|SIGNATURE)$/;

/** Whether a URL's query parameter holds a secret by its name: as a variable's (secretName), or a signature (URL_SIGNATURE). */
function secretParameterName(name: string): boolean {
  return secretName(name) || URL_SIGNATURE.test(name.toUpperCase().split(/[^A-Z0-9]+/).filter((word) => word !== '').at(-1) ?? '');
}

/** A parameter's name percent-decoded (`access%5Ftoken`), or as written when it is no valid encoding. */
function decodedName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/**
 * Whether a URL in `value` has a query or fragment parameter named as a secret (secretParameterName),
 * with a value: `https://api.example.com/notify?token=…`, an OAuth redirect's `#access_token=…`,
 * Azure's SAS `&sig=…`, a URL in another's query (`?next=https://h/?token=…`). Each word of the value
 * is read once: linear in it.
 */
function secretInQuery(value: string): boolean {
  for (const word of value.split(/\s+/)) {
    const scheme = word.indexOf('://');
    if (scheme === -1) continue;
    const query = word.slice(scheme).search(/[?#]/);
    if (query === -1) continue;
    for (const parameter of word.slice(scheme + query + 1).split(/[?#&;]/)) {
      const sign = parameter.indexOf('=');
      if (sign > 0 && sign < parameter.length - 1 && secretParameterName(decodedName(parameter.slice(0, sign)))) return true;
    }
  }
  return false;
}

/** Whether a variable holds a secret: by its name, or by a value that is a credential (SECRET_VALUE, CONNECTION_SECRET, AUTHORIZATION_HEADER, secretInQuery). */
export function looksSecret(name: string, value: string | undefined): boolean {
  return secretName(name) || (value !== undefined && (SECRET_VALUE.test(value) || CONNECTION_SECRET.test(value) || AUTHORIZATION_HEADER.test(value) || secretInQuery(value)));
}

/** What a hidden secret is shown as. */
export const MASK = '***';

/**
 * A name and its sign (`=` or `:`), maybe with a quote closing the name between them: JSON's
 * `"password": …`, a dict's `'api_key': …`, JSON quoted as JSON `{\"token\":…}` (the quote is the
 * sign's group's first). A name starts where no letter or `_` comes before it (after a digit it may:
 * `2_TOKEN=`) and is at most 128 characters, so each place in a long run of name characters is
 * tried once or not at all: the search stays linear in the text.
 */
const NAME_AND_SIGN = /(?<![A-Za-z_])([A-Za-z_][A-Za-z0-9_.-]{0,127})((?:\\?["'])?\s*[=:]\s*)/g;

/** The quote that closes a quoted name, at the start of its sign: `"`, `'` or `\"`. */
const CLOSING_QUOTE = /^\\?["']/;
/**
 * A value after its sign: quoted, or up to a space, quote or separator. A quote never closed runs to
 * the end of its line: it is all the value there is (`PASSWORD="hunter2` cut from a longer line).
 * A backslash escapes the next character, in double quotes or out: text quoted as JSON
 * (`"GITHUB_TOKEN=\"hunter2"`) hides no part of a value behind `\"`. A value opened by `\"` runs
 * to its `\"`, or to the text's own closing `"`, spaces and all (`{"cmd":"PGPASSWORD=\"a b\" psql"}`).
 */
const VALUE = /"(?:\\.|[^"\\])*"|'[^']*'|["'][^\n\r]*|\\"(?:\\[^"]|[^"\\\n\r])*(?:\\")?|(?:\\.|[^\s"';&|,}\\])+/y;

/**
 * A Cookie or Set-Cookie header (`Cookie: sid=…; csrf=…`): every cookie in it is a credential, so its
 * value runs to the end of the header, which ends where its line or the quote around it does.
 */
const COOKIE_HEADER = /^(?:set-)?cookie$/i;
const HEADER_VALUE = /[^\r\n"'\\]+/y;

/**
 * Secret-looking pieces of free text, each with what it keeps: a token by its shape (looser than
 * SECRET_VALUE's: a line shown is cheaper to over-mask than an environment), a bearer token, a JWT,
 * a URL's password, a webhook's key (WEBHOOK); then `NAME=value` for a secret NAME (maskAssignments).
 */
const MASKED: readonly [RegExp, (match: string, ...groups: string[]) => string][] = [
  [/\b(?:gh[pousr]_|github_pat_|gl(?:pat|rt|dt|ptt|ft)-|hf_|xox[abeoprs]-|sk-|npm_|[rs]k_live_|AIza|do[opr]_v1_)[A-Za-z0-9_-]{6,}/g, () => MASK],
  [/\bA[KS]IA[0-9A-Z]{16}\b/g, () => MASK],
  [/\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}/g, () => MASK],
  [/\bhv[sbr]\.[A-Za-z0-9_-]{20,}/g, () => MASK],
  // The credentials after an Authorization header's scheme; the assignment rule that runs after these
  // then masks the scheme too (`Authorization: *** ***`). Bearer has its own rule below.
  [/\b((?:proxy-)?authorization\s*:\s*["']?(?:basic|token|digest|negotiate|ntlm)\s+)[A-Za-z0-9._~+/=-]{6,}/gi, (_match, head = '') => `${head}${MASK}`],
  [/\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)?/g, () => MASK],
  [/\b(Bearer)(\s+)[A-Za-z0-9._~+/=-]{6,}/gi, (_match, scheme = '', space = '') => `${scheme}${space}${MASK}`],
  [/\b([A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^\s/:@]*:)[^\s/@]+@/g, (_match, head = '') => `${head}${MASK}@`],
  [new RegExp(`(${WEBHOOK})[^\\s"']+`, 'g'), (_match, head = '') => `${head}${MASK}`],
];

/** Arguments' names for entries, not credentials. */
const ENTRY_KEYS = new Set(['KEY', 'KEYS']);

/**
 * Whether an argument's name says its value is a secret: as a variable's (secretName), except a bare
 * `key` or `keys`, which in arguments name entries (the memo's key, a dictionary's), not credentials.
 * `api_key`, `apiKey`, `secret_key` still are; a bare `key`'s value is still checked by its shape.
 */
function secretArgumentName(name: string): boolean {
  return secretName(name) && !ENTRY_KEYS.has(name.replace(/[^A-Za-z0-9]+/g, '').toUpperCase());
}

/**
 * Whether a name found by NAME_AND_SIGN says its value is a secret. A quoted name (its sign opens with
 * the quote that closes it) is a key of JSON or a dict, judged as a call's arguments' keys are
 * (secretArgumentName: a bare `"key"` names an entry); its quote must open right before it, or it
 * is no quoted name (`it's the password': …`). A URL's query parameter (`?`, `&` or `#`
 * before it, `=` after) is judged as secretInQuery judges it (`&sig=`); any other as a variable's name.
 */
function secretNameBefore(text: string, at: number, name: string, sign: string): boolean {
  const quote = CLOSING_QUOTE.exec(sign)?.[0];
  if (quote === undefined) return /[?&#]/.test(text.charAt(at - 1)) && sign === '=' ? secretParameterName(name) : secretName(name);
  return text.slice(at - quote.length, at) === quote && secretArgumentName(name);
}

/**
 * `NAME=value` (or `NAME: value`, `"NAME": value`) with a secret NAME: its value masked. After a name
 * that is not secret the search goes on from its value, which may hold one: `http://h/x?api_key=…`
 * (the scheme looks like a name, `:` its sign), `step: PGPASSWORD="…"`, `error: password: …`. One
 * pass, each search starting past the last name: linear in the text, however many names it holds.
 */
function maskAssignments(text: string): string {
  const names = new RegExp(NAME_AND_SIGN.source, 'g');
  const value = new RegExp(VALUE.source, 'y');
  const headerValue = new RegExp(HEADER_VALUE.source, 'y');
  let shown = '';
  let kept = 0;
  for (let match = names.exec(text); match !== null; match = names.exec(text)) {
    const [whole, name = '', sign = ''] = match;
    if (!secretNameBefore(text, match.index, name, sign)) continue;
    // A header's value runs to its end; a quoted one (`Cookie: "sid=…"`) is a value like any other.
    const header = COOKIE_HEADER.test(name) && sign.includes(':') && !/["'\\]/.test(text.charAt(names.lastIndex));
    const reading = header ? headerValue : value;
    reading.lastIndex = names.lastIndex;
    const secret = reading.exec(text);
    if (secret === null) continue;
    shown += `${text.slice(kept, match.index)}${whole}${MASK}`;
    kept = names.lastIndex = reading.lastIndex;
  }
  return kept === 0 ? text : shown + text.slice(kept);
}

/** `text` with what looks like a secret in it shown as MASK. */
export function maskSecrets(text: string): string {
  return maskAssignments(MASKED.reduce((shown, [pattern, keep]) => shown.replace(pattern, keep), text));
}

/**
 * A JSON value (a tool call's arguments) with its secrets masked: a string under a secret-named key
 * whole, any other string's secret-looking pieces. An array or object more than MAX_JSON_DEPTH levels
 * down is masked whole: it is never walked (the stack would run out), so never shown unmasked.
 */
export function maskSecretsIn(value: unknown, key = '', depth = 0): unknown {
  if (typeof value === 'string') return key !== '' && secretArgumentName(key) && value !== '' ? MASK : maskSecrets(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_JSON_DEPTH) return MASK;
  if (Array.isArray(value)) return value.map((item) => maskSecretsIn(item, '', depth + 1));
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, maskSecretsIn(item, name, depth + 1)]));
}

/**
 * The shortest value of a secret entry masked wherever it turns up (knownSecrets): a shorter one
 * ("1", "yes") is an ordinary word more often than a secret, and masking it would garble every line.
 */
export const KNOWN_SECRET_MIN_CHARS = 4;

/**
 * Values that are settings, not secrets, whatever their name: a count or a fraction (4096, 0.7, -1)
 * or a word such as true or none. A whole number of six digits or more may be a PIN or a password.
 */
const PLAIN_VALUE = /^\s*(?:[+-]?(?:\d{1,5}(?:\.\d*)?|\d+\.\d*|\.\d+)|true|false|yes|no|on|off|none|null|enabled?|disabled?)\s*$/i;

/**
 * The values Argo itself gives a process (an MCP server's `env` in config.json) whose names say they
 * are secrets (the names commands' environments are filtered by), at least KNOWN_SECRET_MIN_CHARS
 * long and not a PLAIN_VALUE, longest first: what the process says back is masked of them (maskKnownSecrets), whatever
 * their shape. A credential by its value alone (a URL's password, a token) is masked by its shape
 * wherever it is already, and only there: the host of a URL it cannot reach stays in view.
 */
export function knownSecrets(env: Readonly<Record<string, string>>): string[] {
  const secrets = Object.entries(env).filter(([name, value]) => value.length >= KNOWN_SECRET_MIN_CHARS && !PLAIN_VALUE.test(value) && secretName(name));
  return [...new Set(secrets.map(([, value]) => value))].sort((a, b) => b.length - a.length);
}

/** `text` with each of `secrets` (knownSecrets, longest first) shown as MASK wherever it is. */
export function maskKnownSecrets(text: string, secrets: readonly string[]): string {
  return secrets.reduce((shown, secret) => shown.split(secret).join(MASK), text);
}
