// Ollama's refusals end to end, by who sent them: Ollama's JSON says why in its own words (its
// cloud turned off, not signed in, its queue full); its Host/Origin check sends a bare 403; a
// proxy's page is a proxy's. And a model list of another shape than Ollama's, in doctor and serve.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BUSY_MESSAGE, SIGNIN_URL } from '../support/fake-ollama.js';
import type { FakeScenario } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { startServe } from '../support/run-serve.js';
import type { ServeProcess } from '../support/run-serve.js';

const CLOUD = 'gpt-oss:120b-cloud';
const ollama = await fakeOllamaPerFile();
const H = ollama.url;

beforeEach(() => {
  ollama.setScenario(undefined);
  ollama.options.models = [{ name: 'argo' }, { name: CLOUD, remote: true }];
  ollama.options.cloud = undefined;
  ollama.options.tagsBody = undefined;
  ollama.requests.length = 0;
});

const chatRequests = (): number => ollama.requests.filter((request) => request.path === '/api/chat').length;
const page503: FakeScenario = { proxyPage: { status: 503, body: '<html><body><h1>503 Service Unavailable</h1>No server is available.</body></html>\n' } };

const NO_CLOUD = `Ollama at ${H} answered HTTP 403: ollama cloud is disabled: remote model is unavailable; that Ollama has cloud models turned off (OLLAMA_NO_CLOUD, or "disable_ollama_cloud" in its server.json): choose a local model with --model, or turn cloud models on there`;
const SIGN_IN = `Ollama at ${H} answered HTTP 401: unauthorized; a cloud model needs that Ollama signed in to ollama.com: run "ollama signin" on its machine, or choose a local model with --model`;
const HOST_CHECK = `Ollama at ${H} refused the request (403 Forbidden); check OLLAMA_HOST and OLLAMA_ORIGINS on the server`;
const PAGE_503 = `Ollama at ${H} answered HTTP 503: <html><body><h1>503 Service Unavailable</h1>No server is available.</body></html>`;

describe('argo: a refusal, in the words of who refused', () => {
  it.each<[string, () => void, string, string]>([
    ['cloud models turned off (OLLAMA_NO_CLOUD)', () => (ollama.options.cloud = 'disabled'), CLOUD, NO_CLOUD],
    ['not signed in to ollama.com (the sign-in address is not shown)', () => (ollama.options.cloud = 'signed-out'), CLOUD, SIGN_IN],
    ["Ollama's Host/Origin check (403, no body)", () => ollama.setScenario({ proxyPage: { status: 403, body: '' } }), 'argo', HOST_CHECK],
    ["a proxy's 503 page: not Ollama busy, not retried", () => ollama.setScenario(page503), 'argo', PAGE_503],
  ])('%s', async (_case, arrange, model, line) => {
    arrange();
    const home = tempHome();
    const result = await runArgo(['--model', model, 'hi'], { home, host: H });
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: `argo: ${line} (logged as error)\n` });
    expect(result.stderr).not.toContain(SIGNIN_URL);
    expect(logLines(home)).toMatchObject([{ status: 'error', error: line, user_prompt: 'hi' }]);
    const json = await runArgo(['--model', model, '--json', 'hi'], { home, host: H });
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'error', error: line, error_code: 'ollama_error' });
    expect(chatRequests()).toBe(2);
  });

  it("Ollama's own full queue (503 with its JSON) is still busy, and asked again", async () => {
    ollama.setScenario({ busy: 10 });
    const home = tempHome({ retries: { attempts: 2, initialDelayMs: 1 } });
    const result = await runArgo(['--json', 'hi'], { home, host: H });
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'error', error: `Ollama at ${H} is busy (${BUSY_MESSAGE})`, error_code: 'ollama_busy' });
    expect(chatRequests()).toBe(2);
  });
});

describe('argo doctor: a model list of another shape than Ollama\'s', () => {
  it.each([
    ['{}'],
    ['{"models":null}'],
  ])('%s is not Ollama\'s answer', async (body) => {
    ollama.options.tagsBody = body;
    const result = await runArgo(['doctor'], { home: tempHome(), host: H });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`FAIL  model      cannot list the installed models: something at ${H} answered, but not as Ollama does (its model list is not a list of names); check that --host / OLLAMA_HOST points at Ollama\n`);
  });

  it('an entry without a name is left out, not an unexpected failure', async () => {
    ollama.options.tagsBody = '{"models":[{"model":"argo:latest"},{"name":"other:7b","model":"other:7b"}]}';
    const result = await runArgo(['doctor'], { home: tempHome(), host: H });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAIL {2}model {6}argo is not installed \(installed: other:7b\); /);
    expect(result.stderr).not.toContain('unexpected failure');
  });
});

describe('argo serve: the same refusals, and the model list', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    serve = await startServe({ home: tempHome(), host: H });
  });
  afterAll(async () => {
    await serve.stop();
  });

  const ask = async (model: string): Promise<{ status: number; error: { message: string; code: string; type: string }; retryAfter: string | null }> => {
    const response = await fetch(`${serve.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) });
    const { error } = (await response.json()) as { error: { message: string; code: string; type: string } };
    return { status: response.status, error, retryAfter: response.headers.get('retry-after') };
  };
  const SERVE_FIX = 'choose a local model with the request\'s "model"';

  it.each<[string, () => void, string, { status: number; code: string; message: string; retryAfter: string | null }]>([
    ['cloud models turned off', () => (ollama.options.cloud = 'disabled'), CLOUD, { status: 502, code: 'ollama_error', message: NO_CLOUD.replace('choose a local model with --model', SERVE_FIX), retryAfter: null }],
    ['not signed in', () => (ollama.options.cloud = 'signed-out'), CLOUD, { status: 502, code: 'ollama_error', message: SIGN_IN.replace('choose a local model with --model', SERVE_FIX), retryAfter: null }],
    ["Ollama's Host/Origin check", () => ollama.setScenario({ proxyPage: { status: 403, body: '' } }), 'argo', { status: 502, code: 'ollama_error', message: HOST_CHECK, retryAfter: null }],
    ["a proxy's 503 page", () => ollama.setScenario(page503), 'argo', { status: 502, code: 'ollama_error', message: PAGE_503, retryAfter: null }],
    ["Ollama's full queue", () => ollama.setScenario({ busy: 10 }), 'argo', { status: 503, code: 'ollama_busy', message: `Ollama at ${H} is busy (${BUSY_MESSAGE})`, retryAfter: '2' }],
  ])('%s', async (_case, arrange, model, expected) => {
    arrange();
    const { status, error, retryAfter } = await ask(model);
    expect({ status, code: error.code, message: error.message, retryAfter }).toEqual(expected);
    expect(error.message).not.toContain(SIGNIN_URL);
  });

  it('GET /v1/models: a list of another shape is a 502 saying so; an entry without a name is left out', async () => {
    ollama.options.tagsBody = '{"models":null}';
    const bad = await fetch(`${serve.url}/v1/models`);
    expect(bad.status).toBe(502);
    expect(await bad.json()).toMatchObject({ error: { message: `something at ${H} answered, but not as Ollama does (its model list is not a list of names); check that argo serve's OLLAMA_HOST (or "host" in its config.json) points at Ollama` } });
    ollama.options.tagsBody = '{"models":[{"model":"argo:latest"},{"name":"other:7b","modified_at":"2026-01-15T09:30:00Z"}]}';
    const listed = await fetch(`${serve.url}/v1/models`);
    expect(await listed.json()).toEqual({ object: 'list', data: [{ id: 'other:7b', object: 'model', created: 1768469400, owned_by: 'ollama' }] });
  });
});
