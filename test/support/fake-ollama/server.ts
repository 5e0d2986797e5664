// The HTTP server: routing as Gin does it, generate/chat validated in the order routes.go applies
// it, recording every request, and the handle a test holds.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Exchange, notify, sendBody, sendError, sendJson, whenever } from './exchange.js';
import type { Handler, ServerState } from './exchange.js';
import { BUSY_MESSAGE, RATE_LIMIT_MESSAGE, RUNNER_ERROR_MESSAGE, takeBusy, takeScenario } from './faults.js';
import { hostAllowed, isLoopbackAddress } from './host-check.js';
import { checkTopLogprobs } from './logprobs.js';
import { contextWindow, findModel, handlePs, handleShow, handleTags, modelsOf, parseModelName } from './models.js';
import type { ResolvedModel } from './models.js';
import { estimatePromptTokens } from './reply.js';
import { answerWhole, buildPlan, streamPlan } from './stream.js';
import { bindToolFields } from './tool-binding.js';
import { takeRound } from './tool-calls.js';
import type { Endpoint, FakeOllama, FakeOllamaOptions, RecordedRequest, RequestBody } from './types.js';
import { profileOfOptions, versionOf } from './versions.js';
import type { VersionProfile } from './versions.js';
import { HttpError, bindBody, createdAt, keepAliveMs, nowNs, pick, str } from './wire.js';

const handleRoot: Handler = (_state, ctx) => {
  sendBody(ctx, 200, 'Ollama is running', 'text/plain; charset=utf-8');
};

const handleVersion: Handler = (state, ctx) => {
  sendJson(ctx, 200, { version: versionOf(state.options) });
};


const STRUCT: Record<Endpoint, string> = { generate: 'GenerateRequest', chat: 'ChatRequest' };

// generate reports a missing model as not found, chat as required (parseAndValidateModelRef).
function lookupModel(state: ServerState, endpoint: Endpoint, requested: string, profile: VersionProfile): ResolvedModel {
  if (!requested && endpoint === 'chat') throw new HttpError(400, 'model is required');
  if (requested && !parseModelName(requested)) throw new HttpError(400, 'invalid model name');
  const model = findModel(state.options, requested);
  if (!model && endpoint === 'chat' && profile.chatNotFoundFromScheduler) {
    throw new HttpError(404, `model ${JSON.stringify(requested)} not found, try pulling it first`);
  }
  if (!model) throw new HttpError(404, `model '${requested}' not found`);
  return model;
}

// What routes.go says for a cloud model it cannot reach ollama.com for: OLLAMA_NO_CLOUD set
// (internalcloud.DisabledError), or not signed in (api.AuthorizationError → the signin_url, which
// names this machine's public key).
const CLOUD_DISABLED = 'ollama cloud is disabled: remote model is unavailable';
export const SIGNIN_URL = 'https://ollama.com/connect?name=fake-host&key=c3NoLWVkMjU1MTkgQUFBQUMzTnphQzFsWkRJMU5URTVBQUFBSUZha2VLZXk';

function refuseCloud(state: ServerState): void {
  if (state.options.cloud === 'disabled') throw new HttpError(403, CLOUD_DISABLED);
  if (state.options.cloud === 'signed-out') throw new HttpError(401, 'unauthorized', { signin_url: SIGNIN_URL });
}

// The think value a release reads: before 0.9.0 the field does not exist.
const thinkOf = (body: RequestBody, profile: VersionProfile): unknown => (profile.think ? pick(body, 'think') : undefined);

function capabilityError(body: RequestBody, endpoint: Endpoint, requested: string, model: ResolvedModel, profile: VersionProfile) {
  const caps = model.capabilities;
  const think = thinkOf(body, profile);
  if (!caps.includes('thinking') && (think === true || (typeof think === 'string' && think !== ''))) {
    return `${JSON.stringify(requested)} does not support thinking`;
  }
  if (!caps.includes('completion')) return `${JSON.stringify(requested)} does not support ${endpoint}`;
  const tools = pick(body, 'tools');
  if (profile.tools && endpoint === 'chat' && Array.isArray(tools) && tools.length > 0 && !caps.includes('tools')) {
    return `${model.full} does not support tools`;
  }
  const suffix = pick(body, 'suffix');
  if (endpoint === 'generate' && str(suffix) && !caps.includes('insert')) {
    return `${model.full} does not support insert`;
  }
  // 0.11.0–0.17.6 took levels from gpt-oss (harmony) models only.
  if (typeof think === 'string' && profile.thinkLevels === 'gpt-oss' && model.family !== 'gptoss') {
    return `think value ${JSON.stringify(think)} is not supported for this model`;
  }
  return undefined;
}

/** A gpt-oss model of a release with the harmony parser (routes.go shouldUseHarmony). */
const usesHarmony = (model: ResolvedModel, profile: VersionProfile): boolean => profile.harmony && model.family === 'gptoss';

// How a thinking model's reasoning reaches the client: in `thinking` fields, inline in the text
// between <think> tags (a release without `think`, or one that thinks only when asked), or not at all.
// Harmony parses the reasoning channel into `thinking` whatever `think` says.
function thinkingMode(body: RequestBody, model: ResolvedModel, profile: VersionProfile): 'field' | 'inline' | 'off' {
  if (!model.capabilities.includes('thinking')) return 'off';
  if (usesHarmony(model, profile)) return 'field';
  const think = thinkOf(body, profile);
  if (!profile.think) return 'inline';
  if (think === false) return 'off';
  const asked = think === true || typeof think === 'string';
  return asked || profile.thinksByDefault ? 'field' : 'inline';
}

const isEmptyRequest = (body: RequestBody, endpoint: Endpoint): boolean => {
  if (endpoint === 'generate') return str(pick(body, 'prompt')) === '';
  const messages = pick(body, 'messages');
  return !Array.isArray(messages) || messages.length === 0;
};

// The answer to a load or unload request: a single done line, never streamed.
function sendLifecycle(ctx: Exchange, endpoint: Endpoint, requested: string, reason: 'load' | 'unload'): void {
  const text = endpoint === 'generate' ? { response: '' } : { message: { role: 'assistant', content: '' } };
  sendJson(ctx, 200, { model: requested, created_at: createdAt(), ...text, done: true, done_reason: reason });
}

function markLoaded(state: ServerState, model: ResolvedModel, keepAlive: number, numCtx: number): void {
  state.loaded.set(model.key, { model, expiresAt: Date.now() + keepAlive, contextLength: numCtx });
}

async function handleInference(state: ServerState, ctx: Exchange, endpoint: Endpoint): Promise<void> {
  const startNs = nowNs();
  const profile = profileOfOptions(state.options);
  const body = bindBody(ctx.record.body, STRUCT[endpoint], profile);
  if (endpoint === 'chat') bindToolFields(body, profile);
  if (profile.logprobs) checkTopLogprobs(body);
  const requested = str(pick(body, 'model'));
  const model = lookupModel(state, endpoint, requested, profile);
  if (model.remote) refuseCloud(state);
  // Before 0.1.23 keep_alive was no field: every model stayed the default 5 minutes.
  const keepAlive = keepAliveMs(profile.keepAlive ? body : {});
  if (isEmptyRequest(body, endpoint) && pick(body, 'keep_alive') !== undefined && keepAlive === 0) {
    state.loaded.delete(model.key);
    sendLifecycle(ctx, endpoint, requested, 'unload'); return;
  }
  const rawConflict = endpoint === 'generate' && pick(body, 'raw') === true &&
    (str(pick(body, 'template')) || str(pick(body, 'system')) || Array.isArray(pick(body, 'context')));
  if (rawConflict) { sendError(ctx, 400, 'raw mode does not support template, system, or context'); return; }
  const rejection = capabilityError(body, endpoint, requested, model, profile);
  if (rejection) { sendError(ctx, 400, rejection); return; }
  if (takeBusy(state.options.scenario)) {
    const retryAfter = state.options.scenario?.busyRetryAfter;
    if (retryAfter !== undefined) ctx.res.setHeader('Retry-After', retryAfter);
    if (state.options.scenario?.busyAsRateLimit === true) sendError(ctx, 429, RATE_LIMIT_MESSAGE);
    else sendError(ctx, 503, BUSY_MESSAGE);
    return;
  }

  const scenario = takeScenario(state.options.scenario);
  await ctx.wait(scenario.firstChunkDelayMs);
  if (ctx.gone) return;
  if (scenario.runnerError) {
    const message = typeof scenario.runnerError === 'string' ? scenario.runnerError : RUNNER_ERROR_MESSAGE;
    sendError(ctx, 500, message); return;
  }
  if (scenario.proxyPage) { sendBody(ctx, scenario.proxyPage.status, scenario.proxyPage.body, scenario.proxyPage.type ?? 'text/html'); return; }
  const numCtx = contextWindow(state.options, model, body);
  markLoaded(state, model, keepAlive, numCtx);
  if (isEmptyRequest(body, endpoint)) { sendLifecycle(ctx, endpoint, requested, 'load'); return; }

  // A prompt over the window is cut silently; prompt_eval_count is the one sign of it.
  const tokens = estimatePromptTokens(body, endpoint);
  ctx.record.prompt = { tokens, numCtx, truncated: tokens > numCtx };
  const round = endpoint === 'chat' ? takeRound(state, body) : undefined;
  const plan = buildPlan(state, {
    body, endpoint, thinking: thinkingMode(body, model, profile), harmony: usesHarmony(model, profile), bareJsonCalls: ['{', '['].includes(model.toolTag), profile, scenario: round?.scenario ?? scenario, round, promptEvalCount: Math.min(tokens, numCtx), startNs,
  });
  if (pick(body, 'stream') === false) await answerWhole(ctx, plan);
  else await streamPlan(ctx, plan);
  if (keepAlive === 0) state.loaded.delete(model.key);
}

// ---------------------------------------------------------------------------------------------
// Routing (Gin: 404/405 bodies are plain text)

const ROUTES: Record<string, Record<string, Handler>> = {
  '/': { GET: handleRoot, HEAD: handleRoot },
  '/api/version': { GET: handleVersion, HEAD: handleVersion },
  '/api/tags': { GET: handleTags, HEAD: handleTags },
  '/api/show': { POST: handleShow },
  '/api/ps': { GET: handlePs },
  '/api/generate': { POST: (state, ctx) => handleInference(state, ctx, 'generate') },
  '/api/chat': { POST: (state, ctx) => handleInference(state, ctx, 'chat') },
};

async function route(state: ServerState, ctx: Exchange): Promise<void> {
  const { method = 'GET' } = ctx.req;
  if (state.checkHost && !hostAllowed(ctx.req.headers.host)) { sendBody(ctx, 403, '', undefined); return; }
  if (method === 'OPTIONS') { sendBody(ctx, 204, '', undefined); return; }
  const handlers = ctx.record.path === '/api/chat' && !profileOfOptions(state.options).chat ? undefined : ROUTES[ctx.record.path];
  if (!handlers) { sendBody(ctx, 404, '404 page not found', 'text/plain'); return; }
  const handler = handlers[method];
  if (!handler) {
    ctx.res.setHeader('Allow', Object.keys(handlers).join(', '));
    sendBody(ctx, 405, '405 method not allowed', 'text/plain'); return;
  }
  try {
    await handler(state, ctx);
  } catch (error) {
    if (error instanceof HttpError) { sendJson(ctx, error.status, { error: error.message, ...error.extra }); return; }
    // A bug here or in a reply callback: report it like Ollama reports internal errors.
    if (!ctx.res.headersSent) { sendError(ctx, 500, (error as Error).message); return; }
    ctx.drop();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('the client left while sending the body'));
    });
  });
}

function tryJson(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

function onRequest(state: ServerState, req: IncomingMessage, res: ServerResponse): void {
  const settlers: (() => void)[] = [];
  const record: RecordedRequest = {
    method: req.method ?? 'GET',
    path: (req.url ?? '/').split('?')[0] ?? '/',
    headers: req.headers,
    body: '',
    json: undefined,
    status: undefined,
    linesWritten: 0,
    clientAborted: false,
    held: false,
    prompt: undefined,
    settled: new Promise<void>((resolve) => settlers.push(resolve)),
  };
  state.requests.push(record);
  notify(state);
  // Settled once the response is closed and the handler has returned: nothing more gets written.
  let closed = false;
  let handled = false;
  const settleWhenDone = (): void => {
    if (!closed || !handled) return;
    for (const settle of settlers) settle();
    notify(state);
  };
  const ctx = new Exchange(req, res, record, state, () => {
    closed = true;
    settleWhenDone();
  });
  readBody(req)
    .then((body) => {
      record.body = body;
      record.json = tryJson(body);
      notify(state);
      return route(state, ctx);
    })
    .catch(() => {
      ctx.drop();
    })
    .finally(() => {
      handled = true;
      settleWhenDone();
    });
}

// ---------------------------------------------------------------------------------------------
// Server lifecycle

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startFakeOllama(options: FakeOllamaOptions = {}): Promise<FakeOllama> {
  modelsOf(options); // fail fast on a bad model name
  const host = options.host ?? '127.0.0.1';
  const state: ServerState = {
    options, requests: [], loaded: new Map(), checkHost: false, closing: false, rounds: 0, callIdsMade: 0,
    listeners: new Set(), releases: new Set(),
  };
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => onRequest(state, req, res));
  server.keepAliveTimeout = 0; // Go's server keeps idle connections open indefinitely
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const address = await listen(server, options.port ?? 0, host);
  state.checkHost = isLoopbackAddress(address.address);
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    requests: state.requests,
    get connections() {
      return connections;
    },
    get options() {
      return state.options;
    },
    set options(next: FakeOllamaOptions) {
      state.options = next;
    },
    get rounds() {
      return state.rounds;
    },
    setScenario(scenario) {
      state.options.scenario = scenario;
    },
    chatBodies() {
      return state.requests
        .filter((r) => r.path === '/api/chat' && r.json !== null && typeof r.json === 'object')
        .map((r) => r.json as RequestBody);
    },
    waitForRequest(match = () => true) {
      return whenever(state, () => state.requests.find(match));
    },
    waitForHold() {
      return whenever(state, () => state.requests.find((r) => r.held));
    },
    release() {
      for (const release of [...state.releases]) release();
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        state.closing = true;
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
}

