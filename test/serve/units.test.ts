// Table tests for the small rules: plan, auth, errors, queue.
import { describe, expect, it } from 'vitest';
import type { RefusedFeature } from '../../src/ollama/versions.js';
import { UsageError } from '../../src/errors.js';
import { browserRefusal, checkApiKey, isLoopback, keyChecker, requireKeyFor, sentBearer } from '../../src/serve/auth.js';
import { ApiError, fromBrowser, fromFailure, hideHome, withoutHome } from '../../src/serve/errors.js';
import { clientError } from '../../src/serve/listen.js';
import { PLAIN_SESSION, planAnswer } from '../../src/serve/plan.js';
import type { ArgoDefaults } from '../../src/serve/types.js';
import { KeyedQueue } from '../../src/log/keyed-queue.js';
import { parseChatRequest } from '../../src/serve/schema.js';
import { thrown } from '../support/thrown.js';

const request = (json: Record<string, unknown>, headers: Record<string, string> = {}) =>
  parseChatRequest({ model: 'argo', messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'q' }], ...json }, new Headers(headers));

const DEFAULTS: ArgoDefaults = { session: 'default', replay: { kind: 'none' } };

describe('planAnswer', () => {
  it('plain mode: session api, the messages as they are', () => {
    const plan = planAnswer(request({ stream: true, stream_options: { include_usage: true } }), DEFAULTS, false);
    expect(plan).toEqual({
      turn: {
        session: PLAIN_SESSION,
        mode: 'plain',
        model: 'argo',
        userPrompt: 'q',
        messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'q' }],
        argo: null,
        extras: { options: {} },
      },
      stream: true,
      includeUsage: true,
      logprobs: false,
      round: 1,
    });
  });

  it.each([
    [{ logprobs: true }, { options: {}, logprobs: true }],
    // Ollama's own OpenAI layer leaves top_logprobs 0 out (omitempty): so does Argo.
    [{ logprobs: true, top_logprobs: 0 }, { options: {}, logprobs: true }],
    [{ logprobs: true, top_logprobs: 5 }, { options: {}, logprobs: true, top_logprobs: 5 }],
    [{ logprobs: false }, { options: {} }],
    [{ logprobs: true, argo: { session: 'w' } }, { options: {}, logprobs: true }],
  ])('log probabilities %j: asked of Ollama as %j, in either mode', (json, extras) => {
    const plan = planAnswer(request(json), DEFAULTS, true);
    expect(plan.turn.extras).toEqual(extras);
    expect(plan.logprobs).toBe(json.logprobs);
  });

  it.each([
    [{ argo: { tools: 'fs' } }, {}, 'the "tools" Argo field'],
    [{}, { 'X-Argo-Tools': 'fs' }, 'the X-Argo-Tools header'],
  ])('refuses log probabilities for a run of server-side tools, whose rounds are not one answer: %j %j', (json, headers, named) => {
    expect(() => planAnswer(request({ logprobs: true, ...json }, headers), DEFAULTS, true)).toThrow(
      expect.objectContaining({ status: 400, param: 'logprobs', message: `log probabilities are not given for a run of server-side tools (${named}); leave out "logprobs", or the tools` }) as ApiError,
    );
  });

  // `none` is no server-side tools, as `--tools none` is to the CLI: a plain Argo-mode answer.
  const CLIENT_TOOL = [{ type: 'function', function: { name: 'get_time' } }];
  it.each<[string, Record<string, unknown>, Record<string, string>, boolean]>([
    ['argo.tools "none"', { argo: { tools: 'none' } }, {}, true],
    ['argo.tools ["none"]', { argo: { tools: ['none'] } }, {}, true],
    ['X-Argo-Tools: none', {}, { 'X-Argo-Tools': 'none' }, true],
    ['argo.tools "none" on a server without tools', { argo: { tools: 'none' } }, {}, false],
    ['argo.tools []', { argo: { tools: [] } }, {}, true],
  ])('%s runs no tools: client tools and log probabilities are taken (agent mode %s)', (_name, json, headers, agentMode) => {
    for (const extra of [{}, { tools: CLIENT_TOOL }, { logprobs: true }]) {
      const plan = planAnswer(request({ ...json, ...extra }, headers), DEFAULTS, agentMode);
      expect(plan.turn).toMatchObject({ mode: 'argo', argo: { tools: [] } });
    }
  });

  // A request starts with no tools (config's "tools" are not applied on the server): nothing to take away from.
  it.each<[Record<string, unknown>, Record<string, string>, string, string]>([
    [{ argo: { tools: '-read_file' } }, {}, 'argo.tools', 'argo.tools: "-read_file"'],
    [{ argo: { tools: ['-shell', '-web'] } }, {}, 'argo.tools', 'argo.tools: "-shell,-web"'],
    [{}, { 'X-Argo-Tools': '-shell' }, 'X-Argo-Tools', 'X-Argo-Tools: "-shell"'],
    [{ argo: { tools: `-${'x'.repeat(199)},-y` } }, {}, 'argo.tools', `argo.tools: "-${'x'.repeat(199)}…"`],
  ])('a list that only takes away %j %j: 400 invalid_value on %s', (json, headers, param, quoted) => {
    expect(() => planAnswer(request(json, headers), DEFAULTS, true)).toThrow(
      expect.objectContaining({
        status: 400,
        param,
        code: 'invalid_value',
        message: `${quoted} only takes tools away, and a request starts with none (config's "tools" are not applied on the server); name what to keep too, e.g. "dev,-shell"`,
      }) as ApiError,
    );
  });

  it.each<[Record<string, unknown>, string[]]>([
    [{ argo: { tools: 'dev,-shell' } }, ['dev', '-shell']],
    [{ argo: { tools: 'fs' } }, ['fs']],
    // Resolved by the runner, which says "none" cannot be combined.
    [{ argo: { tools: 'none,fs' } }, ['none', 'fs']],
  ])('%j names the tools %j', (json, tools) => {
    expect(planAnswer(request(json), DEFAULTS, true).turn.argo).toMatchObject({ tools });
  });

  it.each([
    ['Explain \ud83d this', 'Explain \ufffd this'],
    ['a \udc00 b \ud83d', 'a \ufffd b \ufffd'],
    ['a whole 😀 stays', 'a whole 😀 stays'],
  ])('half an emoji in %j is taken as the log keeps it: %j', (content, userPrompt) => {
    const json = { messages: [{ role: 'user', content }] };
    expect(planAnswer(request({ ...json, argo: { session: 'w' } }), DEFAULTS, false).turn.userPrompt).toBe(userPrompt);
    expect(planAnswer(request(json), DEFAULTS, false).turn.userPrompt).toBe(userPrompt);
  });

  // Argo mode sends what `argo -s NAME "prompt"` sends, and the shell's words carry no edge blanks.
  it.each([
    ['  Write tests  ', 'Write tests'],
    ['Is it ok?\n', 'Is it ok?'],
    ['\n\tdef f():\n\t\treturn 1\n', 'def f():\n\t\treturn 1'],
    ['no blanks', 'no blanks'],
  ])('Argo mode takes %j as %j; plain mode logs it as sent', (content, typed) => {
    const json = { messages: [{ role: 'user', content }] };
    expect(planAnswer(request({ ...json, argo: { session: 'w' } }), DEFAULTS, false).turn.userPrompt).toBe(typed);
    expect(planAnswer(request(json), DEFAULTS, false).turn.userPrompt).toBe(content);
  });

  it.each([
    [{ argo: { replay: 'session' } }, 'default', { replay: { kind: 'session' } }],
    [{ argo: { session: 'work' } }, 'work', { session: 'work', replay: DEFAULTS.replay }],
    // An empty argo object is Argo mode all the same: the configured session and replay, no defaults added.
    [{ argo: {} }, 'default', { replay: DEFAULTS.replay }],
    [{ argo: {}, temperature: null }, 'default', { replay: DEFAULTS.replay }],
  ])('Argo mode %j: session %s, no client messages', (json, session, argo) => {
    const plan = planAnswer(request(json), DEFAULTS, false);
    expect(plan.turn).toMatchObject({ mode: 'argo', session, messages: [], userPrompt: 'q', argo, extras: { options: {} } });
    expect(plan.stream).toBe(false);
  });

  it.each([
    [{ 'x-argo-tools': '' }],
    [{ 'x-argo-session': '  ', 'x-argo-replay': '' }],
  ])('blank headers %j leave the request in plain mode', (headers) => {
    expect(planAnswer(request({}, headers), DEFAULTS, true).turn).toMatchObject({ mode: 'plain', session: PLAIN_SESSION, argo: null, messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'q' }] });
  });

  // The CLI's rule: without --replay the default replay applies, and --reason checks against it.
  it.each([
    [{ argo: { session: 'w' } }, { kind: 'none' }, { replay: { kind: 'none' } }],
    [{ argo: { session: 'w' } }, { kind: 'last', count: 3 }, { replay: { kind: 'last', count: 3 } }],
    [{ argo: { replay: 'none' } }, { kind: 'last', count: 3 }, { replay: { kind: 'none' } }],
    [{ argo: { reason: 'clarification' } }, { kind: 'last', count: 2 }, { replay: { kind: 'last', count: 2 }, reason: 'clarification' }],
    [{ argo: { reason: 'session' } }, { kind: 'session' }, { replay: { kind: 'session' }, reason: 'session' }],
  ])('Argo mode %j with default replay %j: %j', (json, replay, argo) => {
    expect(planAnswer(request(json), { session: 'default', replay: replay as ArgoDefaults['replay'] }, false).turn.argo).toMatchObject(argo);
  });

  // Each field named as it was sent; a replay left out as its reason was sent.
  const NONE = { kind: 'none' };
  const SESSION = { kind: 'session' };
  it.each([
    [{ reason: 'clarification' }, {}, NONE, 'argo.reason', '"reason" needs "replay": "last:N" or "session"'],
    [{ reason: 'clarification', replay: 'none' }, {}, { kind: 'last', count: 2 }, 'argo.reason', '"reason" needs "replay": "last:N" or "session"'],
    [{ reason: 'clarification' }, {}, SESSION, 'argo.reason', 'this server\'s default replay is "session" (its own default), which always uses reason "session"; send "replay": "last:N" with reason "clarification"'],
    [{ reason: 'clarification', replay: 'session' }, {}, SESSION, 'argo.reason', '"replay": "session" always uses reason "session"; use "replay": "last:N" with reason "clarification"'],
    [undefined, { 'X-Argo-Reason': 'clarification' }, NONE, 'X-Argo-Reason', 'X-Argo-Reason needs X-Argo-Replay: last:N or session'],
    [undefined, { 'X-Argo-Reason': 'clarification', 'X-Argo-Replay': 'none' }, { kind: 'last', count: 2 }, 'X-Argo-Reason', 'X-Argo-Reason needs X-Argo-Replay: last:N or session'],
    [undefined, { 'X-Argo-Reason': 'clarification' }, SESSION, 'X-Argo-Reason', 'this server\'s default replay is "session" (its own default), which always uses reason "session"; send X-Argo-Replay: last:N with reason "clarification"'],
    [undefined, { 'X-Argo-Reason': 'clarification', 'X-Argo-Replay': 'session' }, NONE, 'X-Argo-Reason', 'X-Argo-Replay: session always uses reason "session"; use X-Argo-Replay: last:N with reason "clarification"'],
    [{ replay: 'none' }, { 'X-Argo-Reason': 'clarification' }, NONE, 'X-Argo-Reason', 'X-Argo-Reason needs "replay": "last:N" or "session"'],
    [{ reason: 'clarification' }, { 'X-Argo-Replay': 'session' }, NONE, 'argo.reason', 'X-Argo-Replay: session always uses reason "session"; use X-Argo-Replay: last:N with reason "clarification"'],
    // The body's reason wins over the header's, and is named so.
    [{ reason: 'clarification' }, { 'X-Argo-Reason': 'session' }, NONE, 'argo.reason', '"reason" needs "replay": "last:N" or "session"'],
  ])('Argo fields %j with headers %j and default replay %j: 400 on %s', (argo, headers, replay, param, message) => {
    expect(() => planAnswer(request({ argo }, headers), { session: 'default', replay: replay as ArgoDefaults['replay'] }, false)).toThrow(
      expect.objectContaining({ status: 400, param, message }) as ApiError,
    );
  });

  // A session replay the client never sent is the server's default, named by where the operator set it.
  it.each([
    ['env', {}, 'this server\'s default replay is "session" (ARGO_REPLAY where it runs), which always uses reason "session"; send "replay": "last:N" with reason "clarification"'],
    ['config', {}, 'this server\'s default replay is "session" ("defaultReplay" in its config.json), which always uses reason "session"; send "replay": "last:N" with reason "clarification"'],
    ['config', { 'X-Argo-Reason': 'clarification' }, 'this server\'s default replay is "session" ("defaultReplay" in its config.json), which always uses reason "session"; send X-Argo-Replay: last:N with reason "clarification"'],
    ['flag', {}, 'this server\'s default replay is "session" (as it was started), which always uses reason "session"; send "replay": "last:N" with reason "clarification"'],
  ] as const)('a default session replay from %s refuses a reason (headers %j): %s', (replaySource, headers, message) => {
    const argo = 'X-Argo-Reason' in headers ? undefined : { reason: 'clarification' };
    expect(() => planAnswer(request({ argo }, headers), { session: 'default', replay: SESSION as ArgoDefaults['replay'], replaySource }, false)).toThrow(
      expect.objectContaining({ status: 400, message }) as ApiError,
    );
  });

  it('plain mode without a user message logs an empty prompt; Argo mode refuses it', () => {
    const noUser = { messages: [{ role: 'system', content: 's' }] };
    expect(planAnswer(request(noUser), DEFAULTS, false).turn.userPrompt).toBe('');
    expect(() => planAnswer(request({ ...noUser, argo: { session: 'w' } }), DEFAULTS, false)).toThrow(expect.objectContaining({ param: 'messages' }) as ApiError);
  });

  // The CLI's rule: `argo -s NAME "   "` is no prompt. Plain mode sends the messages as they are, images too.
  const IMAGE = { type: 'image_url', image_url: { url: 'data:image/png;base64,QUJD' } };
  const AUDIO = { type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } };
  const BLANK = 'the last user message has no text, and Argo mode takes its text as the prompt (as argo -s NAME "prompt" does); send the question as its text';
  const IMAGES_ONLY = 'the last user message has no text, only images or audio, and Argo mode sends the text alone (as argo -s NAME "prompt" does); add the question as a text part, or send the images in plain mode (no argo object, no X-Argo-* header)';
  it.each([
    ['', BLANK],
    ['   ', BLANK],
    ['\n\t', BLANK],
    [[], BLANK],
    [[{ type: 'text', text: ' ' }, { type: 'text', text: '' }], BLANK],
    [[IMAGE], IMAGES_ONLY],
    [[{ type: 'text', text: '  ' }, IMAGE], IMAGES_ONLY],
    [[AUDIO], IMAGES_ONLY],
  ])('Argo mode refuses a last user message of %j: 400 on messages; plain mode sends it', (content, message) => {
    const json = { messages: [{ role: 'user', content: 'earlier' }, { role: 'user', content }] };
    expect(() => planAnswer(request({ ...json, argo: { session: 'w' } }), DEFAULTS, false)).toThrow(
      expect.objectContaining({ status: 400, param: 'messages', code: 'empty_user_message', message }) as ApiError,
    );
    expect(planAnswer(request(json), DEFAULTS, false).turn.mode).toBe('plain');
  });

  it.each([
    [' q ', 'q'],
    [[{ type: 'text', text: 'what is this?' }, IMAGE], 'what is this?'],
  ])('Argo mode takes a last user message of %j as the prompt %j', (content, userPrompt) => {
    const plan = planAnswer(request({ messages: [{ role: 'user', content }], argo: { session: 'w' } }), DEFAULTS, false);
    expect(plan.turn).toMatchObject({ mode: 'argo', userPrompt, messages: [] });
  });

  it.each([
    [{ argo: { tools: 'fs' } }, {}, 'argo.tools', 'this server does not run tools; leave out the "tools" Argo field'],
    [{}, { 'X-Argo-Tools': 'fs' }, 'X-Argo-Tools', 'this server does not run tools; leave out the X-Argo-Tools header'],
  ])('the tools Argo field needs agent mode: %j %j → 400 on %s', (json, headers, param, message) => {
    expect(() => planAnswer(request(json, headers), DEFAULTS, false)).toThrow(expect.objectContaining({ status: 400, param, message, code: 'tools_unavailable' }) as ApiError);
    expect(planAnswer(request(json, headers), DEFAULTS, true).turn.argo?.tools).toEqual(['fs']);
  });

  const CLIENT_TOOLS = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }];
  it.each([
    [{ argo: { tools: 'fs' }, tools: CLIENT_TOOLS }, {}, 'argo.tools', '"tools" (run by the client) and the "tools" Argo field (run on the server) cannot be combined; send one of them'],
    [{ tools: CLIENT_TOOLS }, { 'X-Argo-Tools': 'fs' }, 'X-Argo-Tools', '"tools" (run by the client) and the X-Argo-Tools header (run on the server) cannot be combined; send one of them'],
  ])('refuses %j with headers %j: tools_conflict on %s', (json, headers, param, message) => {
    expect(() => planAnswer(request(json, headers), DEFAULTS, true)).toThrow(expect.objectContaining({ status: 400, param, message, code: 'tools_conflict' }) as ApiError);
  });

  it.each([[{ argo: { tools: 'fs' }, tools: [] }], [{ argo: { tools: [] }, tools: [{ type: 'function', function: { name: 'f' } }] }]])('accepts %j', (json) => {
    expect(() => planAnswer(request(json), DEFAULTS, true)).not.toThrow();
  });
});

describe('auth', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.1', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.4', false],
    ['example.com', false],
    ['128.0.0.1', false],
  ])('%s is loopback: %s', (host, loopback) => {
    expect(isLoopback(host)).toBe(loopback);
  });

  it.each([
    ['127.0.0.1', undefined, null],
    ['127.0.0.1', '', null],
    ['127.0.0.1', 'k', 'k'],
    ['0.0.0.0', 'k', 'k'],
  ])('bind %s with key %j → %j', (host, key, expected) => {
    expect(requireKeyFor(host, key)).toBe(expected);
  });

  it.each([[undefined], ['']])('refuses a public bind with key %j', (key) => {
    expect(() => requireKeyFor('0.0.0.0', key)).toThrow(UsageError);
    expect(() => requireKeyFor('0.0.0.0', key)).toThrow(/ARGO_API_KEY/);
  });

  it.each([
    ['127.0.0.1', undefined, false, null],
    ['127.0.0.1', undefined, true, /^argo serve --allow-side-effects needs an API key: without one any user of this machine can reach the server and run commands as you; set ARGO_API_KEY or "serve.apiKey" in config\.json/],
    ['::1', '', true, /--allow-side-effects needs an API key/],
    ['127.0.0.1', 'k', true, null],
    ['0.0.0.0', 'k', true, null],
  ])('bind %s with key %j, side effects %s: refused %s', (host, key, sideEffects, refused) => {
    if (refused === null) expect(requireKeyFor(host, key, sideEffects)).toBe(key ?? null);
    else expect(() => requireKeyFor(host, key, sideEffects)).toThrow(refused);
  });

  // What an Authorization header can carry: visible ASCII and inner spaces; its ends' blanks are lost.
  const fix = 'use letters, digits and punctuation, e.g. a key from "openssl rand -hex 24"';
  it.each([
    ['sk-0123456789abcdef', null],
    ['a key with spaces inside', null],
    ['!#$%&()*+,-./:;<=>?@[]^_`{|}~"\'\\', null],
    [' ', `ARGO_API_KEY is blank, which no client can send: ${fix}, or leave it empty for no key`],
    ['\t\n', `ARGO_API_KEY is blank, which no client can send: ${fix}, or leave it empty for no key`],
    ['sk-1\n', `ARGO_API_KEY contains a control character (a line break?), which an Authorization header cannot carry: ${fix}`],
    ['sk\r\n1', `ARGO_API_KEY contains a control character (a line break?), which an Authorization header cannot carry: ${fix}`],
    ['sk\u007f1', `ARGO_API_KEY contains a control character (a line break?), which an Authorization header cannot carry: ${fix}`],
    ['sk\u200b1', `ARGO_API_KEY contains a control character (a line break?), which an Authorization header cannot carry: ${fix}`],
    [' sk-1', `ARGO_API_KEY starts or ends with a blank, which a client's Authorization header loses: ${fix}`],
    ['sk-1 ', `ARGO_API_KEY starts or ends with a blank, which a client's Authorization header loses: ${fix}`],
    ['sk-1\u00a0', `ARGO_API_KEY starts or ends with a blank, which a client's Authorization header loses: ${fix}`],
    ['sk-clé', `ARGO_API_KEY contains a character beyond ASCII, which clients send in an Authorization header each their own way: ${fix}`],
    ['sk-🔑', `ARGO_API_KEY contains a character beyond ASCII, which clients send in an Authorization header each their own way: ${fix}`],
  ])('key %j: refused %j (the key never shown)', (key, refused) => {
    if (refused === null) {
      expect(checkApiKey(key, 'ARGO_API_KEY')).toBe(key);
      // Sent as a client sends it, it is matched.
      expect(keyChecker(key)(`Bearer ${key}`)).toBe(true);
      return;
    }
    const error = thrown(() => checkApiKey(key, 'ARGO_API_KEY'));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(refused);
  });

  it.each<[string | undefined, string | undefined, ReturnType<typeof browserRefusal>]>([
    // Programs: a loopback Host, no Origin (or no Host at all, as HTTP/1.0 may send).
    ['127.0.0.1:10007', undefined, null],
    ['localhost:10007', undefined, null],
    ['LOCALHOST', undefined, null],
    ['localhost.:10007', undefined, null],
    ['[::1]:10007', undefined, null],
    ['127.0.0.2', undefined, null],
    ['app.localhost:10007', undefined, null],
    ['0.0.0.0:10007', undefined, null],
    [undefined, undefined, null],
    // DNS rebinding: a page's own name, resolved to this machine.
    ['evil.example:10007', undefined, 'host'],
    ['localhost.evil.example', undefined, 'host'],
    ['127.0.0.1.nip.io:10007', undefined, 'host'],
    ['192.168.1.4:10007', undefined, 'host'],
    ['', undefined, 'host'],
    ['a b', undefined, 'host'],
    ['user@127.0.0.1', undefined, 'host'],
    ['127.0.0.1/x', undefined, 'host'],
    [':pw@localhost', undefined, 'host'],
    ['localhost#', undefined, 'host'],
    ['localhost?', undefined, 'host'],
    ['[::ffff:127.0.0.1]:10007', undefined, null],
    ['[::ffff:7f00:1]', undefined, null],
    ['[::ffff:c0a8:104]', undefined, 'host'],
    // A page of this machine, and of another site (a text/plain POST needs no preflight).
    ['127.0.0.1:10007', 'http://localhost:3000', null],
    ['127.0.0.1:10007', 'https://127.0.0.1', null],
    ['127.0.0.1:10007', 'http://[::1]:8080', null],
    ['127.0.0.1:10007', 'https://evil.example', 'origin'],
    ['127.0.0.1:10007', 'http://localhost.evil.example', 'origin'],
    // A page with no origin of its own: a local file, or any site's sandboxed frame.
    ['127.0.0.1:10007', 'null', 'opaque-origin'],
    ['127.0.0.1:10007', 'NULL', 'origin'],
    ['127.0.0.1:10007', 'chrome-extension://abcdef', 'origin'],
    // Desktop apps' own pages, as Ollama allows them by default.
    ['127.0.0.1:10007', 'file://', null],
    ['127.0.0.1:10007', 'vscode-webview://abc', null],
    ['127.0.0.1:10007', 'vscode-file://vscode-app', null],
    ['127.0.0.1:10007', 'tauri://localhost', null],
    ['127.0.0.1:10007', 'app://.', null],
    ['127.0.0.1:10007', 'vscode-webview-evil://abc', 'origin'],
    ['127.0.0.1:10007', 'ftp://localhost', 'origin'],
    ['127.0.0.1:10007', '', 'origin'],
    ['evil.example', 'https://evil.example', 'host'],
  ])('without a key, Host %j and Origin %j: refused for %s', (host, origin, refused) => {
    expect(browserRefusal(host, origin)).toBe(refused);
  });

  it.each<[Parameters<typeof fromBrowser>[0], string, string, string]>([
    ['host', '"evil.example"', 'foreign_host', 'the Host "evil.example" is not a name of this machine: '],
    ['origin', '"https://evil.example"', 'foreign_origin', 'a request from the web page at "https://evil.example" is refused: '],
    // Not "from pages on this machine only": a local file is one, and is told what works instead.
    ['opaque-origin', '"null"', 'foreign_origin', 'a request from a web page with no origin (Origin "null": an HTML file opened in the browser, or a sandboxed frame of any site) is refused: '],
  ])('a refusal for %s (%s) is a 403 %s saying why', (refused, value, code, start) => {
    const error = fromBrowser(refused, value);
    expect([error.status, error.type, error.code, error.param]).toEqual([403, 'permission_error', code, null]);
    expect(error.message.startsWith(start)).toBe(true);
  });

  it('a page with no origin is told to serve it from localhost or an app, not that it is a site', () => {
    const { message } = fromBrowser('opaque-origin', '"null"');
    expect(message).toContain('serve the page from http://localhost (e.g. "python3 -m http.server" in its folder, then open http://localhost:8000/)');
    expect(message).toContain("an app's own file:// page");
    expect(message).not.toContain('on this machine only');
  });

  it.each([
    ['Bearer secret', true, true],
    ['bearer secret', true, true],
    ['Bearer  secret ', true, true],
    ['Bearer secre', false, true],
    ['Bearer secrets', false, true],
    ['Bearer ', false, false],
    ['secret', false, false],
    ['Basic secret', false, false],
    ['', false, false],
    [undefined, false, false],
  ])('%j matches: %s; a bearer token was sent: %s', (header, ok, sent) => {
    expect(keyChecker('secret')(header)).toBe(ok);
    expect(sentBearer(header)).toBe(sent);
  });
});

describe('fromFailure', () => {
  it.each([
    [{ kind: 'model-missing', message: 'm' }, 404, 'model_not_found'],
    [{ kind: 'unreachable', message: 'm' }, 502, 'ollama_unreachable'],
    [{ kind: 'busy', message: 'm', httpStatus: 503 }, 503, 'ollama_busy'],
    [{ kind: 'idle', message: 'm' }, 504, 'ollama_timeout'],
    [{ kind: 'http', message: 'm', httpStatus: 400 }, 400, 'ollama_rejected'],
    [{ kind: 'http', message: 'm', httpStatus: 500 }, 502, 'ollama_error'],
    [{ kind: 'mid-stream', message: 'm' }, 502, 'ollama_mid_stream'],
    [{ kind: 'dropped', message: 'm' }, 502, 'ollama_dropped'],
    [{ kind: 'argo', message: 'm' }, 500, 'argo_error'],
    // Ollama too old for what the request asked: the client can ask without it.
    [{ kind: 'too-old', message: 'm' }, 400, 'ollama_too_old'],
    [{ kind: 'too-old', message: 'm', httpStatus: 400 }, 400, 'ollama_too_old'],
  ])('%j → %i %s', (failure, status, code) => {
    const error = fromFailure(failure);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.body()).toEqual({ error: { message: 'm', type: expect.any(String) as string, param: code === 'model_not_found' ? 'model' : null, code } });
    expect(error.status).toBe(status);
    expect(error.headers).toEqual(status === 503 ? { 'Retry-After': '2' } : {});
  });

  // Named only where the client's field alone asks for it: tools and thinking may be the server's own (toolsets, "think").
  it.each<[RefusedFeature | undefined, string | null]>([
    ['logprobs', 'logprobs'],
    ['schemaFormat', 'response_format'],
    ['tools', null],
    ['thinkLevels', null],
    ['thinkMax', null],
    [undefined, null],
  ])('Ollama too old for %s: param %s', (feature, param) => {
    expect(fromFailure({ kind: 'too-old', message: 'm', ...(feature !== undefined ? { feature } : {}) }).param).toBe(param);
  });

  it("a busy Ollama's own Retry-After is passed on", () => {
    expect(fromFailure({ kind: 'busy', message: 'm', retryAfterS: 30 }).headers).toEqual({ 'Retry-After': '30' });
  });
});

describe('hideHome: a client is never told where the data home is', () => {
  const home = '/srv/argo';
  it.each([
    ['a file in it', 'cannot write /srv/argo/logs/2026-11-27.log (EACCES)', 'cannot write <data home>/logs/2026-11-27.log (EACCES)'],
    ['the home itself, at the end', 'nothing is written in /srv/argo', 'nothing is written in <data home>'],
    ['the home itself, then a full stop', 'nothing is written in /srv/argo.', 'nothing is written in <data home>.'],
    ['quoted, as Node quotes a path', "EACCES: permission denied, open '/srv/argo/tool-results/x.json'", "EACCES: permission denied, open '<data home>/tool-results/x.json'"],
    ['in brackets, twice', '(/srv/argo/a) and (/srv/argo/b)', '(<data home>/a) and (<data home>/b)'],
    ['followed by a space', '/srv/argo is not a folder', '<data home> is not a folder'],
    ['another folder that starts the same: not the home', 'see /srv/argo-old/logs and /srv/argonaut', 'see /srv/argo-old/logs and /srv/argonaut'],
    ['no path at all', 'the model answered nothing', 'the model answered nothing'],
    ['a folder above the home is not the home', 'cannot read /srv', 'cannot read /srv'],
  ])('%s', (_name, text, shown) => {
    expect(hideHome(text, home)).toBe(shown);
  });

  it.each([
    ['no home given', undefined, '/srv/argo/x'],
    ['a home of one character would hide every slash: left', '/', '/srv/argo/x'],
    ['a short home hides only itself as a path', '/s', '/srv/argo/x'],
  ])('%s', (_name, given, text) => {
    expect(hideHome(text, given)).toBe(text);
  });

  it('withoutHome keeps the error\'s status, type, code, param and headers', () => {
    const error = new ApiError(503, 'cannot read /srv/argo/STOP', 'server_error', 'argo_stopped', 'x', { 'X-Should-Retry': 'false' });
    expect(withoutHome(error, home)).toMatchObject({ status: 503, message: 'cannot read <data home>/STOP', type: 'server_error', code: 'argo_stopped', param: 'x', headers: { 'X-Should-Retry': 'false' } });
    const plain = new ApiError(400, 'no path here', 'invalid_request_error');
    expect(withoutHome(plain, home)).toBe(plain);
  });
});

describe("clientError: Node's own refusals as OpenAI errors", () => {
  const LIMITS = { headersTimeoutMs: 10_000, requestTimeoutMs: 60_000 };
  it.each<[string | undefined, string | undefined, number, string, string]>([
    ['ERR_HTTP_REQUEST_TIMEOUT', undefined, 408, 'request_timeout', 'the request did not arrive in time: its headers must arrive within 10 s and the whole request within 60 s; send it at once'],
    ['HPE_HEADER_OVERFLOW', 'Header overflow', 431, 'headers_too_large', "the request's headers (its URL included) are larger than 16384 bytes; send a shorter URL or fewer headers"],
    ['HPE_INVALID_METHOD', 'Invalid method encountered', 400, 'invalid_http', 'the request is not valid HTTP/1.1 (Invalid method encountered); send a well-formed request'],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', undefined, 400, 'invalid_http', 'the request is not valid HTTP/1.1 (HPE_UNEXPECTED_CONTENT_LENGTH); send a well-formed request'],
    [undefined, 'Backslash in request path', 400, 'invalid_http', 'the request is not valid HTTP/1.1 (Backslash in request path); send a well-formed request'],
  ])('%s (%s) → %i %s', (code, reason, status, errorCode, message) => {
    const refusal = clientError(code, reason, LIMITS);
    expect([refusal.status, refusal.body()]).toEqual([status, { error: { message, type: 'invalid_request_error', param: null, code: errorCode } }]);
  });
});

describe('KeyedQueue', () => {
  it('runs one key in order, other keys alongside, and survives a failure', async () => {
    const queue = new KeyedQueue();
    const events: string[] = [];
    let releaseA!: () => void;
    const a = queue.run('s', async () => {
      events.push('a start');
      await new Promise<void>((resolve) => (releaseA = resolve));
      events.push('a end');
      throw new Error('a failed');
    });
    const b = queue.run('s', () => {
      events.push('b');
      return Promise.resolve('b done');
    });
    const other = await queue.run('t', () => {
      events.push('other');
      return Promise.resolve(1);
    });
    expect(other).toBe(1);
    expect(events).toEqual(['a start', 'other']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.busy).toBe(1);
    releaseA();
    await expect(a).rejects.toThrow('a failed');
    expect(await b).toBe('b done');
    expect(events).toEqual(['a start', 'other', 'a end', 'b']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.busy).toBe(0);
  });
});
