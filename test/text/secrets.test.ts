import { describe, expect, it } from 'vitest';
import { KNOWN_SECRET_MIN_CHARS, knownSecrets, looksSecret, maskKnownSecrets, maskSecrets, maskSecretsIn } from '../../src/text/secrets.js';

describe('maskSecrets: secret-looking pieces of a line shown as ***', () => {
  it.each<[string, string, string]>([
    ['a GitHub token assigned to a secret name', 'GITHUB_TOKEN=ghp_abcdef1234567890 true', 'GITHUB_TOKEN=*** true'],
    ['a GitHub token on its own', 'git push https://x.test ghp_abcdef1234567890', 'git push https://x.test ***'],
    ['an OpenAI key', 'curl -d k=sk-proj-abcdefgh123 x', 'curl -d k=*** x'],
    ['a Hugging Face token', 'huggingface-cli login --token hf_abcdefghijkl', 'huggingface-cli login --token ***'],
    ['a Slack token', 'post xoxb-1234567890-abcdef', 'post ***'],
    ['a bearer token', 'curl -H "Authorization: Bearer abc.def-123456" x', 'curl -H "Authorization: *** ***" x'],
    ['a basic header, any case', 'AUTHORIZATION: basic dXNlcjpwYXNzd29yZA==', 'AUTHORIZATION: *** ***'],
    ["a basic header inside git's extraHeader", 'git -c http.extraHeader="Authorization: Basic dXNlcjpwYXNz" clone', 'git -c http.extraHeader="Authorization: *** ***" clone'],
    ['a proxy token header', 'Proxy-Authorization: token abcdef123456', 'Proxy-Authorization: *** ***'],
    ['the word basic elsewhere is kept', 'a basic example: Basic information', 'a basic example: Basic information'],
    ['a DigitalOcean token', `doctl auth init -t dop_v1_${'0a'.repeat(32)}`, 'doctl auth init -t ***'],
    ['a SendGrid key', `key SG.${'a'.repeat(22)}.${'B'.repeat(43)} end`, 'key *** end'],
    ['a Vault token', 'VAULT said hvs.CAESIJlWh8Zk2Q4x7uMdmgUrAzbD end', 'VAULT said *** end'],
    ['a GitLab runner token', 'gitlab-runner register --token glrt-t1_abcdefghijklmnopqrst', 'gitlab-runner register --token ***'],
    ["sshpass's variable", 'SSHPASS=hunter2 sshpass -e ssh host', 'SSHPASS=*** sshpass -e ssh host'],
    ["Bitwarden's session", 'export BW_SESSION="abc123=="', 'export BW_SESSION=***'],
    ['a session name is kept', 'ARGO_SESSION=work argo', 'ARGO_SESSION=work argo'],
    ['a JWT', 'echo eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig_nature', 'echo ***'],
    ['PASSWORD=value, quoted', `PGPASSWORD='hunter2' psql`, 'PGPASSWORD=*** psql'],
    ['KEY=value', 'OPENAI_API_KEY=abc123 run', 'OPENAI_API_KEY=*** run'],
    ['a flag with a secret name', 'mysql --password=hunter2 db', 'mysql --password=*** db'],
    ["a URL's password", 'psql postgres://me:pw@db/app', 'psql postgres://me:***@db/app'],
    ["a Slack webhook's key", 'curl https://hooks.slack.com/services/T0/B0/XyZ', 'curl https://hooks.slack.com/services/***'],
    ['an AWS access key id', 'AKIAABCDEFGHIJKLMNOP', '***'],
    ['ordinary words and assignments are kept', 'make CC=gcc -j4 tokens.txt', 'make CC=gcc -j4 tokens.txt'],
    ["a URL's first query parameter", 'curl -s https://api.example.com/v1/data?access_token=S3CRET', 'curl -s https://api.example.com/v1/data?access_token=***'],
    ["a URL's later query parameter", 'http://h/x?a=1&api_key=S3CRET', 'http://h/x?a=1&api_key=***'],
    ['a URL whose query holds no secret is kept', 'http://h/x?page=2&sort=asc', 'http://h/x?page=2&sort=asc'],
    ['an assignment after a "word:"', 'echo step: PGPASSWORD=hunter2', 'echo step: PGPASSWORD=***'],
    ['a secret two names deep', 'a: b=PASSWORD=x', 'a: b=PASSWORD=***'],
    ['a quoted value after a "word:"', 'step: PGPASSWORD="s3cr3t" psql', 'step: PGPASSWORD=*** psql'],
    ['a single-quoted value with a space after a "word:"', "env: API_KEY='abc def' run", 'env: API_KEY=*** run'],
    ['"name: value" after a "word:"', 'error: password: hunter2', 'error: password: ***'],
    ["a URL's quoted query value", 'http://h/x?api_key="abc"', 'http://h/x?api_key=***'],
    ['a name after a digit', 'export 2_TOKEN=abcdef', 'export 2_TOKEN=***'],
    ['a path is kept', 'src/sk-lib/task.ts', 'src/sk-lib/task.ts'],
    // A value cut from a longer line (a path, a quote a message ends): its quote is never closed.
    ['a quote never closed runs to the end of its line', 'it said: PASSWORD="hunter2 was refused\nnext', 'it said: PASSWORD=***\nnext'],
    ['a single quote never closed too', "API_KEY='abc def", 'API_KEY=***'],
    ['a quote closed on a later line is one value, as before', 'PASSWORD="a\nb" run', 'PASSWORD=*** run'],
    ['an apostrophe after a bare value is not a quote of it', "password: it's here", "password: ***'s here"],
    // Text quoted as JSON (a memo key in an error, a logged command).
    ['an escaped quote starting a value quoted as JSON', '"GITHUB_TOKEN=\\"hunter2" must be a string', '"GITHUB_TOKEN=***" must be a string'],
    ['escaped quotes around a value quoted as JSON', '{"cmd":"PGPASSWORD=\\"hunter2\\" psql"}', '{"cmd":"PGPASSWORD=*** psql"}'],
    ['an escaped quote starting a value with a space, quoted as JSON', '"GITHUB_TOKEN=\\"hunter two" must be a string', '"GITHUB_TOKEN=***" must be a string'],
    ['escaped quotes around a value with a space, quoted as JSON', '{"cmd":"PGPASSWORD=\\"hunter two\\" psql"}', '{"cmd":"PGPASSWORD=*** psql"}'],
    ['an escaped quote never closed runs to the end of its line', 'PASSWORD=\\"hunter two\nnext', 'PASSWORD=***\nnext'],
    ['an escaped quote inside a quoted value', 'PASSWORD="a\\"b c" run', 'PASSWORD=*** run'],
    ["a connection string's password and key", 'Server=db;Password=hunter2;AccountKey=c2VjcmV0;Pwd=x', 'Server=db;Password=***;AccountKey=***;Pwd=***'],
    ['a cookie header, every cookie in it', 'Cookie: session=abc; csrf=def; theme=dark', 'Cookie: ***'],
    ['a cookie header ends with its line', 'cookie: session=abc; csrf=def\nnext=1', 'cookie: ***\nnext=1'],
    ['a cookie header ends with the quote around it', `curl -H 'Cookie: a=1; b=2' -H "Set-Cookie: sid=x; Path=/" u`, `curl -H 'Cookie: ***' -H "Set-Cookie: ***" u`],
    ['a cookie header quoted as JSON', '{"headers":"Cookie: a=1; b=2\\r\\nAccept: */*"}', '{"headers":"Cookie: ***\\r\\nAccept: */*"}'],
    ['a cookie header whose value is quoted', 'Cookie: "sid=abc123secret" next', 'Cookie: *** next'],
    ['a cookie header single-quoted', "cookie: 'sid=abc123'", 'cookie: ***'],
    ['a cookie in code', 'fetch(u,{headers:{Cookie:"sid=abc123secret"}})', 'fetch(u,{headers:{Cookie:***}})'],
    ['a cookie header quoted as JSON inside JSON', 'Cookie: \\"sid=abc123\\"', 'Cookie: ***'],
    ['a variable naming a cookie: its value, as any other', 'SESSION_COOKIE=abc; ls', 'SESSION_COOKIE=***; ls'],
    ['a personal access token', 'GITHUB_PAT=xyz', 'GITHUB_PAT=***'],
    // Counts of tokens and kinds of keys are settings, shown.
    ['a flag giving a number of tokens', 'llm --max_tokens=4096 --max-new-tokens 512', 'llm --max_tokens=4096 --max-new-tokens 512'],
    ['a flag naming a kind of key', 'python -m json.tool --sort_keys=true', 'python -m json.tool --sort_keys=true'],
    ['MAX_TOKENS beside a token, which is masked', 'MAX_TOKENS=4096 API_TOKEN=abc', 'MAX_TOKENS=4096 API_TOKEN=***'],
    // A name quoted as JSON, a dict or YAML writes it: its closing quote comes between the name and the sign.
    ['a JSON key, no space', '{"password":"x"}', '{"password":***}'],
    ['a JSON key, a space after the colon', '{"password": "hunter2pw"}', '{"password": ***}'],
    ['a JSON key, spaces around the colon', '{"password" : "hunter2pw", "user": "me"}', '{"password" : ***, "user": "me"}'],
    ['JSON quoted as JSON (escaped quotes)', '{\\"token\\":\\"x\\"}', '{\\"token\\":***}'],
    ['JSON quoted as JSON, a value with a space', 'curl -d "{\\"api_key\\": \\"a b\\", \\"n\\": 1}"', 'curl -d "{\\"api_key\\": ***, \\"n\\": 1}"'],
    ['a single-quoted key (a Python dict)', "'api_key': 'x'", "'api_key': ***"],
    ['a quoted key with an unquoted value', '{"password": hunter2pw}', '{"password": ***}'],
    ['a quoted key with dots', "{'db.password': 'x', 'db.host': 'h'}", "{'db.password': ***, 'db.host': 'h'}"],
    ['a quoted key assigned with =', '"GITHUB_TOKEN"="ghx"', '"GITHUB_TOKEN"=***'],
    ['a JSON key in a curl body', `curl -d '{"password": "hunter2pw"}' https://h/login`, `curl -d '{"password": ***}' https://h/login`],
    // Not: a name that is no secret, quoted or not; a bare "key" quoted (it names an entry, as in a call's arguments).
    ['a quoted name that is no secret', '{"passwordless": true, "user": "me"}', '{"passwordless": true, "user": "me"}'],
    ['a quoted count of tokens', '{"max_tokens": 5}', '{"max_tokens": 5}'],
    ['a quoted name where a secret is', '{"token_url": "https://h/t"}', '{"token_url": "https://h/t"}'],
    ['a quoted bare key names an entry', '{"key": "lang", "value": "fr"}', '{"key": "lang", "value": "fr"}'],
    ['a quoted bare key still masks a token by its shape', '{"key": "ghp_abcdef1234567890"}', '{"key": "***"}'],
    // A closing quote with no opening one before the name is not a quoted name.
    ['a quote after a name it does not open', `it's the password': x`, `it's the password': x`],
    ['quotes that do not match', `{"password': "x"}`, `{"password': "x"}`],
    // A URL's query parameters: a secret name, or a signature (Azure's SAS sig, S3's and GCS's X-…-Signature).
    ["an Azure SAS URL's signature", 'https://acme.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=abc%3D', 'https://acme.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=***'],
    ["a presigned S3 URL's signature", 'https://b.s3.amazonaws.com/k?X-Amz-Date=1&X-Amz-Signature=abcdef', 'https://b.s3.amazonaws.com/k?X-Amz-Date=1&X-Amz-Signature=***'],
    ['a fragment holding a token', 'https://app.test/cb#access_token=abc&state=1', 'https://app.test/cb#access_token=***&state=1'],
    ['a signature outside a query is kept', 'sig=abc signature=def', 'sig=abc signature=def'],
    // Webhooks whose path is their key.
    ["a Zapier webhook's key", 'curl https://hooks.zapier.com/hooks/catch/123456/abcdef1/ -d x', 'curl https://hooks.zapier.com/hooks/catch/*** -d x'],
    ["a Microsoft Teams webhook's key", 'https://acme.webhook.office.com/webhookb2/1a2b@3c4d/IncomingWebhook/5e6f/7a8b', 'https://acme.webhook.office.com/***'],
    ["an IFTTT webhook's key", 'https://maker.ifttt.com/trigger/door/with/key/abcDEF123', 'https://maker.ifttt.com/trigger/door/with/key/***'],
    ["a Make webhook's key", 'https://hook.eu1.make.com/abc123def456', 'https://hook.eu1.make.com/***'],
  ])('%s', (_case, text, shown) => {
    expect(maskSecrets(text)).toBe(shown);
  });

  // A quoted name is judged as the same name bare: masked, or kept, both ways.
  it.each(['password', 'api_key', 'tokens_used', 'max_tokens', 'passwordless', 'token_url', 'author', 'GITHUB_TOKEN'])('"%s" quoted is judged as it is bare', (name) => {
    const bare = maskSecrets(`${name}=v5`) !== `${name}=v5`;
    expect(maskSecrets(`{"${name}": "v5"}`) !== `{"${name}": "v5"}`).toBe(bare);
    expect(maskSecrets(`'${name}': v5`) !== `'${name}': v5`).toBe(bare);
  });

  it('a line of many quoted names is masked in one pass', () => {
    const line = `${'"a": 1, '.repeat(50_000)}"password": "x"`;
    expect(maskSecrets(line)).toBe(`${'"a": 1, '.repeat(50_000)}"password": ***`);
  });

  it('a line of thousands of names (a long classpath) is masked in one pass, without deep recursion', () => {
    const classpath = Array.from({ length: 20_000 }, (_, index) => `lib${index}.jar`).join(':');
    const line = `java -cp ${classpath} Main PASSWORD=hunter2`;
    expect(maskSecrets(line)).toBe(`java -cp ${classpath} Main PASSWORD=***`);
  });
});

describe("maskSecretsIn: a call's arguments", () => {
  it.each<[string, unknown, unknown]>([
    ['a string under a secret-named key, whole', { api_key: 'plain', path: 'a.txt' }, { api_key: '***', path: 'a.txt' }],
    ['a secret in a string anywhere', { command: 'GITHUB_TOKEN=ghp_abcdef1234567890 true' }, { command: 'GITHUB_TOKEN=*** true' }],
    ['nested, in lists', { env: [{ TOKEN: 'x' }], n: 3 }, { env: [{ TOKEN: '***' }], n: 3 }],
    ['numbers under a secret-looking name are kept', { max_tokens: 100 }, { max_tokens: 100 }],
    ['raw text that could not be read', 'run sk-abcdefghijklmnop', 'run ***'],
    ['nothing secret: the same', { path: 'notes.txt', limit: 1 }, { path: 'notes.txt', limit: 1 }],
    // A bare `key` names an entry (the memo's, a dictionary's), not a credential; its value is still checked by shape.
    ['a memo key is kept', { operation: 'set', key: 'lang', value: 'v' }, { operation: 'set', key: 'lang', value: 'v' }],
    ['"Key" and "KEY" are bare keys too', { Key: 'a', KEY: 'b', _key_: 'c' }, { Key: 'a', KEY: 'b', _key_: 'c' }],
    ['a bare key holding a token by its shape', { key: 'ghp_abcdef1234567890' }, { key: '***' }],
    ['a key nested in a list of entries', { entries: [{ key: 'name', value: 'x' }] }, { entries: [{ key: 'name', value: 'x' }] }],
    ['api_key, apiKey, API_KEY, secret_key, private-key still are', { api_key: 'a', apiKey: 'b', API_KEY: 'c', secret_key: 'd', 'private-key': 'e' }, { api_key: '***', apiKey: '***', API_KEY: '***', secret_key: '***', 'private-key': '***' }],
    ['token and password still are', { token: 'a', password: 'b' }, { token: '***', password: '***' }],
    // What the CI trace shows (traceLine): JSON written into a command, or quoted as JSON inside it.
    ['JSON in a command', { command: `curl -d '{"password": "hunter2pw"}' u` }, { command: `curl -d '{"password": ***}' u` }],
    ['JSON quoted as JSON in a command', { command: 'echo "{\\"token\\":\\"hunter2pw\\"}"' }, { command: 'echo "{\\"token\\":***}"' }],
    ['raw arguments holding a secret-named key', '{"command": "x", "password": "hunter2pw"', '{"command": "x", "password": ***'],
  ])('%s', (_case, value, shown) => {
    expect(maskSecretsIn(value)).toEqual(shown);
  });

  // Nested past MAX_JSON_DEPTH (100): masked whole, never walked, so never shown unmasked nor a stack overflow.
  const nested = (depth: number, inner: unknown): unknown => {
    let value = inner;
    for (let level = 0; level < depth; level++) value = [value];
    return value;
  };
  it.each<[string, unknown, unknown]>([
    ['100 levels: walked, its secret masked by shape', nested(99, { token: 'x' }), nested(99, { token: '***' })],
    ['100 levels: a plain value kept', nested(99, { path: 'a.txt' }), nested(99, { path: 'a.txt' })],
    ['101 levels: the 101st masked whole', nested(100, { path: 'a.txt' }), nested(100, '***')],
    ['5000 levels: cut at 100, no stack overflow', nested(5000, 'sk-abcdefghijklmnop'), nested(100, '***')],
  ])('%s', (_case, value, shown) => {
    expect(maskSecretsIn(value)).toEqual(shown);
  });
});

describe('looksSecret: a variable withheld from commands by its name', () => {
  it.each<[string, boolean]>([
    // Several secrets in one variable: a plural word.
    ['MY_SECRETS', true],
    ['APP_PASSWORDS', true],
    ['NPM_TOKENS', true],
    ['TOKENS', true],
    ['API_KEYS', true],
    ['DB_PASSWDS', true],
    // Cookies, personal access tokens, short passwords: as the name's last word.
    ['SESSION_COOKIE', true],
    ['COOKIE', true],
    ['AUTH_COOKIES', true],
    ['PAT', true],
    ['GITHUB_PAT', true],
    ['AZURE_DEVOPS_EXT_PAT', true],
    ['NETRC_PW', true],
    ['SMTP_PW', true],
    // Connection strings, one word or two; a key of an account.
    ['AZURE_STORAGE_CONNECTION_STRING', true],
    ['ConnectionStrings__Default', true],
    ['DB_CONNECTIONSTRING', true],
    ['STORAGE_ACCOUNTKEY', true],
    ['AccountKey', true],
    // Not: those words elsewhere than last, inside other words, or where a secret is.
    ['PW_TEST_HTML_REPORT_OPEN', false],
    ['PATH', false],
    ['PATTERN', false],
    ['COOKIE_NAME', false],
    ['CONNECTION_TIMEOUT', false],
    ['HOTKEYS', false],
    ['KEYSTONE_URL', false],
    ['APP_PASSWORDS_FILE', false],
    ['STRING_TABLE', false],
    // A number of tokens or keys, or a kind of key, is a setting: in words, or in one (maxTokens upper-cased).
    ['MAX_TOKENS', false],
    ['MAX_NEW_TOKENS', false],
    ['OPENAI_MAX_TOKENS', false],
    ['MAX_OUTPUT_TOKENS', false],
    ['maxTokens', false],
    ['max-completion-tokens', false],
    ['MIN_TOKENS', false],
    // A rate of tokens or keys is a setting too; a token per something is still a token.
    ['TOKENS_PER_MINUTE', false],
    ['TOKENS_USED', false],
    ['tokens_remaining', false],
    ['KEYS_LEFT', false],
    ['TOKEN_USED', true],
    ['OPENAI_TOKENS_PER_SECOND', false],
    ['KEYS_PER_BATCH', false],
    ['PER_USER_TOKENS', true],
    ['API_TOKENS_PERSONAL', true],
    ['NUM_TOKENS', false],
    ['TOTAL_TOKENS', false],
    ['COUNT_TOKENS', false],
    ['NUM_KEYS', false],
    ['MaxKeys', false],
    ['MAX_TOKEN', false],
    ['TOKEN_COUNT', false],
    ['TOKEN_LIMIT', false],
    ['PASSWORD_MIN_LENGTH', false],
    ['KEY_SIZE', false],
    ['SORT_KEYS', false],
    ['sortKeys', false],
    ['PRIMARY_KEYS', false],
    ['PRIMARY_KEY', false],
    ['DYNAMO_PARTITION_KEY', false],
    ['TOKENIZERS_PARALLELISM', false],
    // Still secrets: a quantity word elsewhere, or the token or key of something.
    ['MAX_API_KEY', true],
    ['MAXMIND_LICENSE_KEY', true],
    ['MINIOSECRETKEY', true],
    ['MINIO_ROOT_PASSWORD', true],
    ['TOKENS_MAX_AGE', true],
    ['MAX_SECRET', true],
    ['NUM_PASSWORDS', true],
    ['GITHUB_TOKEN', true],
    ['HASH_KEY', true],
    // Short forms people write: credentials as CRED(S), a private key as PRIVKEY, a passphrase;
    // Jenkins' credentials() gives DEPLOY_CREDS (user:password), its _PSW and its _USR (the user).
    ['DB_CREDS', true],
    ['AWS_CREDS', true],
    ['CREDS', true],
    ['GIT_CRED', true],
    ['DBCREDS', true],
    ['deployCreds', true],
    ['DEPLOY_CREDS_PSW', true],
    ['SSL_PRIVKEY', true],
    ['PRIVKEY', true],
    ['GPG_PASSPHRASE', true],
    ['MYSQL_PWD', true],
    ['DB_PASSWD', true],
    ['SMTP_PSWD', true],
    ['PRIVATE_KEY', true],
    // Not: the user beside them, a file of them, words that hold the letters, a non-final PSW, the shell's PWD.
    ['DEPLOY_CREDS_USR', false],
    ['CREDS_FILE', false],
    ['AWS_CREDS_PATH', false],
    ['CREDIT_CARD_FORMAT', false],
    ['CREDITS', false],
    ['SACRED', false],
    ['INCREDIBLE', false],
    ['PSW_STATUS', false],
    ['PWD', false],
    ['OLDPWD', false],
    ['PRIVILEGED', false],
    ['PRIVATE_REGISTRY', false],
    // Tools' own: sshpass, Bitwarden, 1Password.
    ['SSHPASS', true],
    ['BW_SESSION', true],
    ['OP_SESSION_my_team', true],
    ['OP_SESSION_ACME', true],
    // A session's name or place is none: only the tools' own above.
    ['ARGO_SESSION', false],
    ['DESKTOP_SESSION', false],
    ['TERM_SESSION_ID', false],
    ['XDG_SESSION_TYPE', false],
    ['SESSION_MANAGER', false],
    ['GDMSESSION', false],
    ['OP_SESSION', false],
    ['SSH_ASKPASS', false],
  ])('%s: %s', (name, secret) => {
    expect(looksSecret(name, 'v')).toBe(secret);
  });
});

describe('looksSecret: a variable withheld from commands by its value', () => {
  it.each<[string, boolean]>([
    ['DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=c2VjcmV0;EndpointSuffix=core.windows.net', true],
    ['Server=db;Database=app;User Id=app;Password=hunter2;', true],
    ['Driver={ODBC Driver 18};Server=db;UID=app;PWD=hunter2', true],
    ['Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=c2VjcmV0', true],
    ['BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022&sig=abc', true],
    ['host=db port=5432 dbname=app user=app password=hunter2', true],
    ['https://api.example.test/v1?user=app&password=hunter2', true],
    ['password = hunter2', true],
    // A URL whose query (or fragment) has a parameter named as a secret is (Google Chat's key and token,
    // an OAuth redirect's access_token), or a signature (Azure's SAS sig, S3's and GCS's presigned URLs).
    ['https://api.example.com/notify?token=hunter2pw', true],
    ['https://api.example.com/v1/data?format=json&api_key=abc', true],
    ['https://chat.googleapis.com/v1/spaces/AAA/messages?key=AIzaX&token=abc%3D', true],
    ['https://app.example.com/cb?state=1&access_token=abc', true],
    ['https://app.example.com/cb#access_token=abc', true],
    ['https://api.example.com/x?apiKey=abc', true],
    ['https://api.example.com/x?access%5Ftoken=abc', true],
    ['https://acme.blob.core.windows.net/c/b?sv=2022-11-02&sp=r&sig=abc%3D', true],
    ['https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Signature=abcdef', true],
    ['https://storage.googleapis.com/b/o?X-Goog-Signature=abcdef', true],
    ['https://mirror.example.com/a https://api.example.com/notify?token=abc', true],
    ['https://redirect.example.com/?next=https://api.example.com/?token=abc', true],
    // Webhooks whose path is their key.
    ['https://hooks.slack.com/services/T0/B0/XyZ', true],
    ['https://discord.com/api/webhooks/1/abc', true],
    ['https://hooks.zapier.com/hooks/catch/123456/abcdef1/', true],
    ['https://acme.webhook.office.com/webhookb2/1a2b@3c4d/IncomingWebhook/5e6f/7a8b', true],
    ['https://outlook.office.com/webhook/1a2b@3c4d/IncomingWebhook/5e6f/7a8b', true],
    ['https://maker.ifttt.com/trigger/door/with/key/abcDEF123', true],
    ['https://hook.eu1.make.com/abc123def456', true],
    // Not: a query naming no secret, an empty secret, a name where a secret is, the word as a value,
    // those names outside a URL's query, other pages of those hosts.
    ['https://example.com/search?q=token&page=2', false],
    ['https://example.com/login?token=', false],
    ['https://example.com/a?token_url=https://h/t&max_tokens=5', false],
    ['https://example.com/a?author=me&design=flat&signal=1&signature_version=4', false],
    ['https://example.com/token?x=1', false],
    ['token=abc', false],
    ['a?token=abc', false],
    ['https://zapier.com/apps', false],
    ['https://www.office.com/launch', false],
    ['https://ifttt.com/explore', false],
    // An Authorization header anywhere in the value (git's http.extraHeader), in any case.
    ['AUTHORIZATION: basic dXNlcjpwYXNzd29yZA==', true],
    ['Authorization: Bearer abcdef123456', true],
    ['X-Trace: 1, Proxy-Authorization: Basic dXNlcjpwYXNz', true],
    ['Authorization: Basic', false],
    // Tokens by their issuer's shape.
    [`dop_v1_${'0a'.repeat(32)}`, true],
    [`doo_v1_${'0a'.repeat(32)}`, true],
    [`SG.${'a'.repeat(22)}.${'B'.repeat(43)}`, true],
    ['hvs.CAESIJlWh8Zk2Q4x7uMdmgUrAzbD', true],
    ['hvb.AAAAAQJgxDfgIfRhvOS8c6l8rvCq', true],
    ['glrt-t1_abcdefghijklmnopqrst', true],
    ['gldt-abcdefghijklmnopqrst', true],
    // Alike, but not those shapes.
    ['dop_v1_short', false],
    ['SG.short.value', false],
    ['hvs.short', false],
    // A connection string without its secret, or the word alone.
    ['Server=db;Database=app;Integrated Security=true', false],
    ['Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root', false],
    ['Password=;', false],
    ['forgot-password=true', false],
    ['the password is in the vault', false],
  ])('%j: %s', (value, secret) => {
    expect(looksSecret('SOME_SETTING', value)).toBe(secret);
  });
});

describe("knownSecrets and maskKnownSecrets: the values Argo gave a process, masked wherever it says them", () => {
  it.each<[string, Record<string, string>, string[]]>([
    ['a secret-named value', { DB_PASSWORD: 'hunter2' }, ['hunter2']],
    // Masked by its shape wherever it is, and only there: the host it names stays in view.
    ['a credential by its value alone is not', { DATABASE: 'postgres://app:pw@db/app' }, []],
    ['an ordinary value is not', { LOG_LEVEL: 'verbose', DATA_DIR: '/srv/data' }, []],
    [`a secret shorter than ${KNOWN_SECRET_MIN_CHARS} characters is not: it would mask ordinary words`, { DISABLE_AUTH: '1', PIN_CODE_PW: 'abc' }, []],
    ['longest first, each once', { A_TOKEN: 'abcd', B_TOKEN: 'abcdefgh', C_TOKEN: 'abcd' }, ['abcdefgh', 'abcd']],
    ['a number of tokens is a setting, not a secret', { MAX_TOKENS: '4096' }, []],
    // A number or a plain word would mask every count or flag the server says.
    ['a count or a fraction under a secret name is not', { TOKEN_TTL: '3600', AUTH_RETRIES: '-1', API_KEY_WEIGHT: '0.75', TOKEN_LIMIT_K: '99999' }, []],
    ['a whole number of six digits or more under a secret name is: a PIN or a numeric password', { DB_PASSWORD: '20240117', PIN_PW: '123456' }, ['20240117', '123456']],
    ['a plain word under a secret name is not', { REQUIRE_AUTH: 'true', USE_TOKEN: 'False', AUTH: 'none', PASSWORD_PROMPT: 'disabled' }, []],
    ['a secret holding digits among letters still is', { API_TOKEN: '4096abcd', PIN_PW: 'true-horse' }, ['true-horse', '4096abcd']],
  ])('%s', (_case, env, secrets) => {
    expect(knownSecrets(env)).toEqual(secrets);
  });

  it.each<[string, string, string[], string]>([
    ['wherever it is, whatever its shape', 'login as app:hunter2@db refused (hunter2)', ['hunter2'], 'login as app:***@db refused (***)'],
    ['a longer secret holding a shorter one is masked whole', 'got abcdefgh', ['abcdefgh', 'abcd'], 'got ***'],
    ['none known: the same text', 'hunter2', [], 'hunter2'],
  ])('%s', (_case, text, secrets, shown) => {
    expect(maskKnownSecrets(text, secrets)).toBe(shown);
  });
});
