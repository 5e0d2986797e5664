// The HTTP adapter: routes, auth, limits, the per-session queue, STOP and shutdown. Every answer is a
// turn run by the injected TurnRunner, which logs it; nothing here talks to Ollama or the log.
import { Hono } from 'hono';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { ArgoError, UsageError, messageLine } from '../errors.js';
import { isSessionName } from '../sessions/names.js';
import { browserRefusal, isLocalOrigin, keyChecker, sentBearer } from './auth.js';
import { CONTROLS, quotedName } from '../output/terminal-text.js';
import { Channel } from './channel.js';
import { jsonStreamResponse, sseResponse } from './sse-body.js';
import { ApiError, badRequest, cutByShutdown, fromBrowser, fromFailure, incompleteBody, notFound, shuttingDown, stopIsSet, tooLarge, unauthorized, withHeaders, withoutHome } from './errors.js';
import { JOB_ID, JOB_LOCK_STALE_MS, JobStore, LiveJob, OUTPUT_SAVE_MS, endedAs, followSaved, isUnfinished } from './jobs.js';
import type { JobEvent, JobRecord, OrphanCount } from './jobs.js';
import { ChunkFormat, StreamedToolCalls, completionObject, findModel, finishReason, modelNotFound, modelObject, toOpenAiToolCalls, usageOf } from './openai.js';
import type { InstalledModel } from './openai.js';
import type { FinishReason, NumberedToolCalls } from './openai.js';
import { planAnswer } from './plan.js';
import type { AnswerPlan } from './plan.js';
import { KeyedQueue } from '../log/keyed-queue.js';
import { MODEL_NAME_RULE, isOllamaModelName } from '../ollama/model-name.js';
import { decodeUtf8 } from '../text/utf8.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../text/json-depth.js';
import { parseChatRequest, parseSessionPatch } from './schema.js';
import type { CutReason, LoggedTurn, RunInput, ServerDeps, ToolEvent, TurnHooks, TurnResult } from './types.js';
import type { Logprob } from '../ollama/transport.js';
import { jsonFaultPlace } from '../text/json-syntax.js';

interface Env {
  Variables: { session: string | undefined; finished: Promise<unknown> | undefined };
}

/** What an answer's or a job's stream sends as a chunk; `logprobs` only when the client asked. */
type Piece =
  | { type: 'text'; text: string; logprobs?: readonly Logprob[] | undefined }
  | { type: 'thinking'; text: string; logprobs?: readonly Logprob[] | undefined }
  | ({ type: 'tool_calls'; logprobs?: readonly Logprob[] | undefined } & NumberedToolCalls)
  | { type: 'tool_event'; event: ToolEvent }
  | { type: 'logprobs'; logprobs: readonly Logprob[] };

/** `shut_out`: the shutdown began while the turn still waited in its session's queue. */
type TurnEvent = Piece | { type: 'end'; result: LoggedTurn } | { type: 'thrown'; error: unknown } | { type: 'shut_out' };

interface Running {
  /** Cuts the work short: an answer or a job is aborted with the reason; a follower of another server's job heeds only the shutdown. */
  cut: (reason: CutReason) => void;
  settled: Promise<void>;
  /** True while a turn still waits in its session's queue: the shutdown ends it at once. */
  queued?: () => boolean;
}

/**
 * Whether STOP, or the server's shutdown, kept a turn from starting (it is logged, cut before it
 * began); `begun` once its place in its session's queue has come.
 */
interface StartCut {
  stopped: boolean;
  shutdown: boolean;
  begun: boolean;
}

/**
 * A job's place in its session's queue, taken as it is accepted: `askedAt` is its turn's timestamp;
 * `made` gives what its run adds to its input once the job is saved, or null when it was not.
 */
interface QueuePlace {
  askedAt: Date;
  made: Promise<Pick<RunInput, 'journaled'> | null>;
}

export interface ArgoServer {
  /** The Hono app: `app.fetch` for a listener, `app.request()` in tests. */
  app: Hono<Env>;
  /**
   * Recovers and prunes jobs, starts hearing STOP. A stale STOP is the caller's to clear once it
   * listens (`StopSignal.clearStale`): a start that fails to bind must leave an operator's STOP be.
   */
  start: () => Promise<{ jobsFailed: OrphanCount; jobsRemoved: number }>;
  /**
   * Refuses new answers, lets running ones finish for up to `graceMs` (less if `hurry` aborts),
   * then cuts them and waits for their log lines.
   */
  drain: (graceMs: number, hurry?: AbortSignal) => Promise<void>;
  /** Answers and jobs running or queued. */
  readonly running: number;
  /**
   * Whether the request is refused from its headers alone (its key, a web page's, a stated length
   * over serve.maxBodyBytes): a client waiting for `100 Continue` need not send the body.
   */
  refusesUnread: (path: string, header: (name: string) => string | undefined) => boolean;
}

/** How many ended jobs whose last state could not be saved are kept in memory, and how often they are saved again. */
const MAX_UNSAVED_JOBS = 100;
const UNSAVED_RETRY_MS = 1000;

/** The request line's status for a client that left before the response began (nginx's "client closed request"). */
const CLIENT_CLOSED = 499;

export function createServer(deps: ServerDeps): ArgoServer {
  const app = new Hono<Env>();
  const queue = new KeyedQueue();
  const running = new Set<Running>();
  const jobs = new JobStore(deps.jobsDir);
  const liveJobs = new Map<string, LiveJob>();
  /** Ended jobs whose record is in memory only (liveJobs has them), oldest first, each with the release of its lock. */
  const unsavedJobs = new Map<string, () => Promise<void>>();
  let resave: NodeJS.Timeout | undefined;
  const checkKey = deps.apiKey === null ? null : keyChecker(deps.apiKey);
  /**
   * Every error a client is sent, worded for it. The data home's path is left out (the operator's log
   * has it) of what the server says of its own failures: a 5xx, or an error of its own made into one.
   * A 4xx it made from the request quotes the client's own text as sent: hidden there, a client could
   * test a guess of the path (`unknown persona "<data home>"` only when right).
   */
  const apiErrorOf = (error: unknown): ApiError => {
    const api = asApiError(error, deps.log);
    if (error instanceof ApiError && api.status < 500) return api;
    const shown = withoutHome(api, deps.home);
    if (shown !== api) deps.log(`argo serve: ${api.message}`);
    return shown;
  };
  let closing = false;
  /** When the shutdown's grace ends (the monotonic clock's ms): a client turned away is told to come back no sooner. */
  let graceEnds = 0;
  let unwatch: () => void = () => undefined;
  let sweep: NodeJS.Timeout | undefined;
  // Said once per file: every listing and every sweep meets it again until it is removed.
  const toldDamaged = new Set<string>();
  const onDamagedJob = (path: string): void => {
    if (toldDamaged.has(path)) return;
    toldDamaged.add(path);
    deps.log(`argo serve: left out damaged job file ${path}`);
  };
  /** Fails jobs whose server is gone; while another server's jobs are still locked, looks again later. */
  const recoverJobs = async (): Promise<{ failed: OrphanCount; removed: number }> => {
    const { failed, removed, elsewhere } = await jobs.recover(deps.clock.now(), deps.limits.jobRetentionDays, onDamagedJob);
    clearTimeout(sweep);
    sweep = undefined;
    if (elsewhere > 0 && !closing) {
      sweep = setTimeout(() => {
        void recoverJobs().then(({ failed: later }) => {
          const count = later.running + later.pending;
          if (count > 0) deps.log(`argo serve: ${count} job(s) whose server stopped marked failed`);
        }, (error: unknown) => deps.log(`argo serve: cannot check jobs: ${(error as Error).message}`));
      }, JOB_LOCK_STALE_MS);
      sweep.unref();
    }
    return { failed, removed };
  };

  // Turns answered whose log line is being written: a session asked for meanwhile (by a client that
  // read the answer's text and left before its end, or by another) must have the turn.
  const beingLogged = new Set<Promise<void>>();
  const logged = (): Promise<unknown> => Promise.all(beingLogged);

  /** Set once the shutdown's grace is over: work tracked from then on is cut as it comes. */
  let graceOver = false;
  const track = (cut: (reason: CutReason) => void, work: Promise<unknown>, queued?: () => boolean): void => {
    const entry: Running = { cut, settled: work.then(() => undefined, () => undefined), ...(queued ? { queued } : {}) };
    running.add(entry);
    void entry.settled.then(() => running.delete(entry));
    if (graceOver) cut('shutdown');
  };
  const cutAll = (reason: CutReason): void => {
    for (const entry of running) entry.cut(reason);
  };
  const comeBackIn = (): number => Math.max(1, Math.ceil((graceEnds - deps.clock.monotonic()) / 1000));
  const refuseWhileClosing = (): void => {
    if (closing) throw shuttingDown(comeBackIn());
  };
  let lastAsked = 0;
  /** Now, as a turn's timestamp: later than the one before, so turns asked within a millisecond keep their order. */
  const askedNow = (): Date => {
    lastAsked = Math.max(deps.clock.now().getTime(), lastAsked + 1);
    return new Date(lastAsked);
  };

  /**
   * Runs the turn (Argo mode queued behind earlier requests on its session) and tracks it for STOP
   * and shutdown. `start.stopped` is set when STOP kept it from starting (set as its turn came, or
   * while it waited in its session's queue): it is logged `stopped` without asking the model.
   * `start.shutdown` likewise when the server's shutdown did: nothing starts once it has begun.
   */
  const runTurn = (
    plan: AnswerPlan,
    turnId: string,
    controller: AbortController,
    hooks: TurnHooks,
    onStart: () => Promise<unknown> = () => Promise.resolve(),
    start: StartCut = { stopped: false, shutdown: false, begun: false },
    place: QueuePlace = { askedAt: askedNow(), made: Promise.resolve({}) },
  ): Promise<LoggedTurn> => {
    // From its answer on (the client may ask for its session at once) until its line is written.
    const counted: TurnHooks = {
      ...hooks,
      onAnswered: (result) => {
        const settled = work.then(() => undefined, () => undefined);
        beingLogged.add(settled);
        void settled.then(() => beingLogged.delete(settled));
        hooks.onAnswered?.(result);
      },
    };
    const task = async (): Promise<LoggedTurn> => {
      // Started as its place comes, whatever it then awaits (a job's file being saved): one that
      // begins before the shutdown runs in its grace, and nothing begins once it is stopping.
      start.begun = true;
      if (closing) controller.abort('shutdown' satisfies CutReason);
      const made = await place.made;
      // A job that could not be saved: nothing runs, and the client was told so.
      if (made === null) throw new Error(`job of turn ${turnId} was not made`);
      const { signal } = controller;
      if (signal.aborted ? signal.reason === ('stop' satisfies CutReason) : await deps.stop.isSet()) {
        controller.abort('stop' satisfies CutReason);
        start.stopped = true;
      }
      await onStart();
      start.shutdown = !start.stopped && signal.reason === ('shutdown' satisfies CutReason);
      return deps.runner.run({ ...plan.turn, ...made, turnId, askedAt: place.askedAt, signal: controller.signal, round: plan.round }, counted);
    };
    const work = plan.turn.mode === 'argo' ? queue.run(plan.turn.session, task) : task();
    track((reason) => controller.abort(reason), work, () => !start.begun);
    // The client hears where its turn's line went; the operator, why it is not where it belongs.
    void work.then((result) => {
      if (result.logProblem) deps.log(`argo serve: turn ${turnId}: ${result.logProblem}`);
    }, () => undefined);
    return work;
  };

  /**
   * Calls `then` when the shutdown cuts a turn still waiting in its session's queue: its client is
   * answered at once, and its turn is logged interrupted with its prompt when its place comes.
   */
  const onShutOut = (controller: AbortController, start: StartCut, then: () => void): void => {
    controller.signal.addEventListener(
      'abort',
      () => {
        if (!start.begun && controller.signal.reason === ('shutdown' satisfies CutReason)) then();
      },
      { once: true },
    );
  };
  const shutOutOfQueue = (turnId: string): ApiError => withHeaders(shuttingDown(comeBackIn()), { 'X-Argo-Turn-Id': turnId });

  app.use(async (c, next) => {
    const started = deps.clock.monotonic();
    await next();
    // Gone before the handler returned: nothing was sent, whatever status the response holds.
    const status = c.req.raw.signal.aborted ? CLIENT_CLOSED : c.res.status;
    const line = (): void => {
      const ms = Math.round(deps.clock.monotonic() - started);
      const path = c.req.path.replace(CONTROLS, '?').slice(0, 200);
      // Names are checked before they are set; cleaned all the same, as one line must stay one line.
      const session = (c.get('session') ?? '-').replace(CONTROLS, '?').slice(0, 64);
      deps.log(`${c.req.method} ${path} ${status} ${ms}ms session=${session}`);
    };
    const finished = c.get('finished');
    if (finished) void finished.then(line, line);
    else line();
  });

  /** What a request is refused for whatever its route: a key missing or wrong, or what only a web page sends. */
  const headerRefusal = (path: string, header: (name: string) => string | undefined): ApiError | null => {
    if (checkKey && path !== '/health') {
      const authorization = header('authorization');
      if (!checkKey(authorization)) return unauthorized(sentBearer(authorization));
    }
    // With a key, the key is the guard; without one, what only a page of another site sends is refused.
    if (checkKey === null) {
      const [host, origin] = [header('host'), header('origin')];
      const refused = browserRefusal(host, origin);
      if (refused !== null) return fromBrowser(refused, quotedName((refused === 'host' ? host : origin) ?? '', 100));
    }
    return null;
  };
  const statedTooLarge = (length: string | undefined): boolean => length !== undefined && Number.parseInt(length, 10) > deps.limits.maxBodyBytes;

  // Pages of this machine may read the answers too; a preflight carries no key, so it is answered
  // before the key is asked for, and the request it clears still needs the key. Only a request from
  // a page of this machine goes through it: touching a response's headers before it exists makes
  // Hono rebuild every streamed answer, a cost no other client should pay.
  const crossOrigin = cors({
    origin: (origin) => origin,
    allowMethods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    exposeHeaders: ['X-Argo-Turn-Id', 'X-Argo-Log', 'Retry-After', 'X-Should-Retry'],
    maxAge: 600,
  });
  app.use(async (c, next) => {
    const origin = c.req.header('origin');
    return origin !== undefined && isLocalOrigin(origin) ? crossOrigin(c, next) : next();
  });

  app.use(async (c, next) => {
    const refused = headerRefusal(c.req.path, (name) => c.req.header(name));
    if (refused) throw refused;
    await next();
  });

  // A body without a length is refused half-read: the rest of it is still on the way, so the
  // connection cannot carry another request, and the client is told not to send one on it.
  const streamedLimit = bodyLimit({ maxSize: deps.limits.maxBodyBytes, onError: () => { throw withHeaders(tooLarge(deps.limits.maxBodyBytes), { Connection: 'close' }); } });
  /**
   * A body that states its length is judged by it, as bodyLimit does, but without bodyLimit's look
   * at the request's body stream: under @hono/node-server that alone builds a web Request around the
   * socket, and the body is then read through web streams instead of straight from Node.
   */
  const limit: MiddlewareHandler<Env> = async (c, next) => {
    const length = c.req.header('content-length');
    if (length === undefined || c.req.header('transfer-encoding') !== undefined) {
      // bodyLimit reads the body itself: a client gone mid-body fails here, not in the handler.
      const body = { read: false };
      try {
        return await streamedLimit(c, () => {
          body.read = true;
          return next();
        });
      } catch (error) {
        if (body.read || error instanceof ApiError) throw error;
        throw incompleteBody();
      }
    }
    if (statedTooLarge(length)) throw tooLarge(deps.limits.maxBodyBytes);
    await next();
  };

  app.onError((error, c) => {
    const api = apiErrorOf(error);
    return c.json(api.body(), api.status, { ...api.headers });
  });
  app.notFound((c) => c.json(notFound(`no route ${c.req.method} ${c.req.path.replace(CONTROLS, '?')}`, 'unknown_route').body(), 404));

  app.get('/health', async (c) => {
    // Bounded by the OllamaInfo itself (2 s): a hung Ollama makes the server degraded, not stuck.
    const version = await deps.ollama.version().catch(() => null);
    return c.json({ status: version === null ? 'degraded' : 'ok', ollama: { reachable: version !== null, version } });
  });

  const installedModels = async (): Promise<InstalledModel[]> => {
    try {
      return await deps.ollama.models();
    } catch (error) {
      // Worded by OllamaInfo, with the fix (argo serve's OLLAMA_HOST…) as a chat request gives it.
      throw new ApiError(502, (error as Error).message, 'api_error', 'ollama_unreachable');
    }
  };

  app.get('/v1/models', async (c) => c.json({ object: 'list', data: (await installedModels()).map(modelObject) }));

  // A model name may hold '/' (namespace/model:tag): the id is the rest of the path.
  app.get('/v1/models/:id{.+}', async (c) => {
    const wanted = c.req.param('id');
    if (!isOllamaModelName(wanted)) throw badRequest(`invalid model id ${quotedName(wanted, 100)}: ${MODEL_NAME_RULE}`, 'model');
    const installed = await installedModels();
    const found = findModel(installed, wanted);
    if (found === undefined) {
      const names = installed.map((model) => model.name);
      throw modelNotFound(wanted, deps.ollama.host, names, await deps.ollama.answeringModel(names));
    }
    return c.json(modelObject(found));
  });

  app.post('/v1/chat/completions', limit, async (c) => {
    refuseWhileClosing();
    const plan = planAnswer(parseChatRequest(await readJson(c), c.req.raw.headers), deps.argoDefaults, deps.agentMode);
    c.set('session', plan.turn.session);
    // Its body may have come whole only once the shutdown began.
    refuseWhileClosing();
    const turnId = deps.newId();
    const controller = new AbortController();
    const onDisconnect = (): void => controller.abort('disconnect' satisfies CutReason);
    const clientSignal = c.req.raw.signal;
    clientSignal.addEventListener('abort', onDisconnect, { once: true });
    const head = { id: `chatcmpl-${turnId}`, created: Math.floor(deps.clock.now().getTime() / 1000), model: plan.turn.model };
    // An answer STOP or the shutdown cut while it ran ends as an answer; one they kept from starting is an error, not an empty 200.
    const start: StartCut = { stopped: false, shutdown: false, begun: false };
    const keptFromStarting = (result: LoggedTurn): ApiError | null => {
      if (start.stopped && result.status === 'stopped') return stopIsSet(turnId);
      if (start.shutdown && result.status === 'interrupted') return withHeaders(shuttingDown(comeBackIn()), { 'X-Argo-Turn-Id': turnId, 'X-Argo-Log': result.log });
      return null;
    };
    const toolsAsked = (plan.turn.argo?.tools?.length ?? 0) > 0;
    /**
     * An error once the turn has begun: a logged one names its turn. One of a run of server-side tools
     * must not be sent again, as its tools may have run (the openai clients retry a 5xx twice).
     */
    const turnError = (error: unknown, logged: LoggedTurn | null): ApiError =>
      withHeaders(apiErrorOf(error), {
        ...(logged ? { 'X-Argo-Turn-Id': turnId, 'X-Argo-Log': logged.log } : {}),
        ...(toolsAsked ? { 'X-Should-Retry': 'false' } : {}),
      });

    // The response ends once the turn's line is written (or could not be): its `argo.log` says which.
    if (!plan.stream) {
      let result: LoggedTurn | null;
      // The answer's text as a stream of it would send it: every round's words for a server-side tool run.
      let text = '';
      let reasoning = '';
      // Every piece's, in the order the pieces came, when the client asked.
      const logprobs: Logprob[] | null = plan.logprobs ? [] : null;
      const keep = (piece: readonly Logprob[] | undefined): void => {
        if (piece) logprobs?.push(...piece);
      };
      const shutOut = new Promise<null>((resolve) => onShutOut(controller, start, () => resolve(null)));
      try {
        const turn = runTurn(
          plan,
          turnId,
          controller,
          {
            onText: (piece, pieceLogprobs) => {
              text += piece;
              keep(pieceLogprobs);
            },
            onThinking: (text, piece) => {
              reasoning += text;
              keep(piece);
            },
            onToolCalls: (_calls, piece) => keep(piece),
            onLogprobs: keep,
          },
          undefined,
          start,
        );
        result = await Promise.race([turn, shutOut]);
      } catch (error) {
        throw turnError(error, null);
      } finally {
        clientSignal.removeEventListener('abort', onDisconnect);
      }
      if (result === null) throw shutOutOfQueue(turnId);
      const kept = keptFromStarting(result);
      if (kept) throw kept;
      if (result.status === 'error' && result.failure) throw turnError(fromFailure(result.failure), result);
      // Interrupted with the client still here: the shutdown cut it.
      if (result.status === 'interrupted') throw turnError(cutByShutdown(turnId), result);
      // A stopped answer is no round of tools: calls it had begun are left for the log, not for the client to run.
      const calls = result.status === 'stopped' ? [] : toOpenAiToolCalls(result.toolCalls, plan.round);
      c.header('X-Argo-Turn-Id', turnId);
      c.header('X-Argo-Log', result.log);
      return c.json(
        completionObject({
          ...head,
          text,
          reasoning,
          toolCalls: calls,
          finishReason: finishOf(result, calls.length),
          usage: usageOf(result.promptTokens, result.completionTokens),
          logprobs,
          argo: argoField(result),
        }),
      );
    }

    const events = new Channel<TurnEvent>();
    const toolCalls = new StreamedToolCalls(plan.round);
    onShutOut(controller, start, () => events.push({ type: 'shut_out' }));
    runTurn(plan, turnId, controller, {
      onText: (text, logprobs) => events.push({ type: 'text', text, logprobs }),
      onThinking: (text, logprobs) => events.push({ type: 'thinking', text, logprobs }),
      onToolCalls: (calls, logprobs) => events.push({ type: 'tool_calls', ...toolCalls.number(calls), logprobs }),
      onLogprobs: (logprobs) => events.push({ type: 'logprobs', logprobs }),
      onToolEvent: (event) => events.push({ type: 'tool_event', event }),
      toolEventsHeard: 'answer',
    }, undefined, start).then(
      (result) => events.push({ type: 'end', result }),
      (error: unknown) => events.push({ type: 'thrown', error }),
    );
    // Headers wait for the first event, so a failure before any text gets its real status.
    const first = await events.next();
    if (first.type === 'shut_out') {
      clientSignal.removeEventListener('abort', onDisconnect);
      throw shutOutOfQueue(turnId);
    }
    if (first.type === 'thrown') {
      clientSignal.removeEventListener('abort', onDisconnect);
      throw turnError(first.error, null);
    }
    const kept = first.type === 'end' ? keptFromStarting(first.result) : null;
    if (kept) {
      clientSignal.removeEventListener('abort', onDisconnect);
      throw kept;
    }
    if (first.type === 'end' && first.result.status === 'error' && first.result.failure && first.result.text === '') {
      clientSignal.removeEventListener('abort', onDisconnect);
      throw turnError(fromFailure(first.result.failure), first.result);
    }
    if (first.type === 'end' && first.result.status === 'interrupted' && first.result.text === '') {
      clientSignal.removeEventListener('abort', onDisconnect);
      throw turnError(cutByShutdown(turnId), first.result);
    }
    c.header('X-Argo-Turn-Id', turnId);
    const format = new ChunkFormat(head);
    let finished!: () => void;
    c.set('finished', new Promise<void>((resolve) => (finished = resolve)));
    return sseResponse(c, async (sse) => {
      try {
        let frames = frame(format.role());
        for (let event: TurnEvent = first; ; event = await events.next()) {
          const batch = [event, ...events.drain()];
          let last: TurnEvent | undefined;
          for (const item of batch) {
            last = item;
            if (item.type === 'end' || item.type === 'thrown') break;
            frames += renderEvent(item, format);
          }
          if (last?.type === 'end' || last?.type === 'thrown') {
            await sse.write(frames + endFrames(last, format, plan, apiErrorOf));
            return;
          }
          await sse.write(frames);
          frames = '';
          // Pieces that arrive together (one read from Ollama) go out in one write, not one each.
          await nextTurnOfLoop();
        }
      } finally {
        clientSignal.removeEventListener('abort', onDisconnect);
        finished();
      }
    }, apiErrorOf);
  });

  app.get('/api/sessions', async (c) => {
    await logged();
    const query = c.req.query('q');
    return c.json(await deps.sessions.list(query === undefined || query === '' ? null : query));
  });

  /** The route's session name, on the request's log line only when it is one (it comes from the URL). */
  const sessionParam = (c: Context<Env>): string | null => {
    const name = c.req.param('name') ?? '';
    if (!isSessionName(name)) return null;
    c.set('session', name);
    return name;
  };
  const noSession = (c: Context<Env>): ApiError => notFound(`no session named ${quotedName(c.req.param('name') ?? '', 80)}`, 'session_not_found');

  app.get('/api/sessions/:name', async (c) => {
    const name = sessionParam(c);
    await logged();
    const shown = name === null ? null : await deps.sessions.show(name);
    if (name === null || shown === null) throw noSession(c);
    if (c.req.method === 'HEAD') return headersOnly(c, 'application/json');
    // Logged once the body has ended, as a stream's request is: its time is the whole answer's.
    let ended!: () => void;
    c.set('finished', new Promise<void>((resolve) => (ended = resolve)));
    return jsonStreamResponse(c, shown, (error) => deps.log(`argo serve: GET /api/sessions/${name} was cut short: ${error instanceof Error ? error.message : String(error)}`), ended);
  });

  app.patch('/api/sessions/:name', limit, async (c) => {
    const name = sessionParam(c);
    const { title } = parseSessionPatch(await readJson(c));
    await logged();
    const updated = name === null ? null : await deps.sessions.setTitle(name, title);
    if (updated === null) throw noSession(c);
    return c.json(updated);
  });

  app.post('/api/jobs', limit, async (c) => {
    refuseWhileClosing();
    const plan = planAnswer(parseChatRequest(await readJson(c), c.req.raw.headers), deps.argoDefaults, deps.agentMode);
    // A job's record keeps its text, not its tokens.
    if (plan.logprobs) throw badRequest('a job keeps its output text, not log probabilities; leave out "logprobs", or ask POST /v1/chat/completions for them', 'logprobs');
    // What its run would refuse at once (an unknown persona, a tool nothing has) is refused now, as
    // a chat completion's is, never as a job that is made only to fail.
    await deps.runner.check?.(plan.turn);
    c.set('session', plan.turn.session);
    // Its body may have come whole only once the shutdown began.
    refuseWhileClosing();
    if (await deps.stop.isSet()) {
      // As a chat completion's: no job, and the turn logged `stopped`, so nothing the client wrote is lost.
      const turnId = deps.newId();
      const controller = new AbortController();
      controller.abort('stop' satisfies CutReason);
      await runTurn(plan, turnId, controller, { onText: () => undefined, onToolCalls: () => undefined });
      throw stopIsSet(turnId);
    }
    refuseWhileClosing();
    const now = deps.clock.now().toISOString();
    const id = deps.newId();
    // Named from the start: the turn its prompt is logged as, whenever the job ends.
    const turnId = deps.newId();
    const record: JobRecord = { id, state: 'pending', created_at: now, updated_at: now, session: plan.turn.session, model: plan.turn.model, output: '', error: null, turn_id: turnId, tool_calls: [], finish_reason: null };
    const job = new LiveJob(record, jobs, deps.clock.now, {
      onSaveError: (error) => deps.log(`argo serve: cannot save job ${id} (${messageLine(error)}); it is kept in memory, as GET /api/jobs/${id} shows it, until a save succeeds`),
      onSavedAgain: () => deps.log(`argo serve: job ${id} is saved again`),
      onEndedElsewhere: () => stopLost(`a save of job ${id} found its file ended`),
    });
    let stopping = false;
    /** Stops a job this server no longer owns; said once it has ended, as it ended. */
    const stopLost = (cause: string): void => {
      // Most often heard of first as the lock's loss, then as the other server's verdict: said once.
      if (stopping) return;
      stopping = true;
      job.subscribe((event) => {
        if (event.type !== 'end') return;
        const { state } = event.record;
        deps.log(
          `argo serve: ${cause}${job.endedByAnother ? `; another server sharing the data home had marked it ${state} meanwhile, so it was stopped here, and its file keeps that verdict` : `, so it was stopped here: ${state}, its output so far kept`}`,
        );
      });
      job.controller.abort('lost' satisfies CutReason);
    };
    liveJobs.set(id, job);
    let release = (): Promise<void> => Promise.resolve();
    let journaled = false;
    const askedAt = askedNow();
    const created = (async () => {
      let unhold: (() => Promise<void>) | null = null;
      try {
        // Locked before its file exists: no server sharing the data home ever sees it unowned. Once
        // the lock is lost (this server paused past its staleness, or its disk stalled), another
        // server may fail the job over at any moment: it is stopped here, never run on unowned.
        release = await jobs.lock(id, (error) => {
          const cause = `lost the lock on job ${id} (${error.message})`;
          // Ended already: nothing to stop.
          if (job.done) deps.log(`argo serve: ${cause}`);
          else stopLost(cause);
        });
        // Its turn in the journal before the job exists: a kill from then on leaves its prompt for
        // the next argo to log (once, under the id its record names), whenever its turn would have come.
        unhold = (await deps.runner.hold?.({ ...plan.turn, turnId, askedAt, signal: job.controller.signal, round: plan.round })) ?? null;
        journaled = unhold !== null;
        await jobs.write(record);
      } catch (error) {
        // No job, so no turn: the client was told nothing was run.
        await unhold?.();
        throw new ApiError(500, `the job could not be saved in the data home, so none was made and nothing was run (${messageLine(error)})`, 'server_error', 'job_not_saved');
      }
    })();
    const made = created.then(
      () => (journaled ? { journaled } : {}),
      () => null,
    );
    const work = (async () => {
      try {
        await runJob(job, plan, turnId, { askedAt, made });
      } finally {
        if ((await made) !== null && !(await job.whenSaved())) keepUnsaved(id, release);
        else letGo(id, release);
      }
    })();
    // Tracked from now on: a shutdown that begins while the job is made waits for it, and cuts it.
    track((reason) => job.controller.abort(reason), work);
    try {
      await created;
    } catch (error) {
      liveJobs.delete(id);
      throw error;
    }
    return c.json({ job_id: id }, 202);
  });

  /** A job this server is done with: its record is on disk (or given up on), its lock let go. */
  const letGo = (id: string, release: () => Promise<void>): void => {
    liveJobs.delete(id);
    unsavedJobs.delete(id);
    release().catch(() => undefined);
  };
  /** An ended job whose last state could not be saved stays in memory, and is saved again, until a save succeeds. */
  const keepUnsaved = (id: string, release: () => Promise<void>): void => {
    unsavedJobs.set(id, release);
    for (const [oldest, itsRelease] of unsavedJobs) {
      if (unsavedJobs.size <= MAX_UNSAVED_JOBS) break;
      deps.log(`argo serve: job ${oldest} is no longer kept in memory (at most ${MAX_UNSAVED_JOBS} unsaved jobs are); its file shows it as it was last saved`);
      letGo(oldest, itsRelease);
    }
    resave ??= setTimeout(() => void saveAgain(), UNSAVED_RETRY_MS);
    resave.unref();
  };
  const saveAgain = async (): Promise<void> => {
    for (const [id, release] of unsavedJobs) {
      const job = liveJobs.get(id);
      if (job === undefined || (await job.save())) letGo(id, release);
    }
    resave = unsavedJobs.size > 0 && !closing ? setTimeout(() => void saveAgain(), UNSAVED_RETRY_MS) : undefined;
    resave?.unref();
  };

  const runJob = async (job: LiveJob, plan: AnswerPlan, turnId: string, place: QueuePlace): Promise<void> => {
    const signal = job.controller.signal;
    const toolCalls = new StreamedToolCalls(plan.round);
    // Queued as it is accepted, before it is saved: jobs on a session run, and are timestamped, in the order they came.
    const running = runTurn(
      plan,
      turnId,
      job.controller,
      { onText: (text) => job.append(text), onToolCalls: (calls) => job.addToolCalls(toolCalls.number(calls).calls), onToolEvent: (event) => job.toolEvent(event), toolEventsHeard: 'job' },
      async () => {
        if (!job.done) await job.start(turnId);
      },
      undefined,
      place,
    );
    void running.catch(() => undefined);
    if ((await place.made) === null) return;
    // A queued job cut (cancelled, stopped, shut down) before its turn comes ends at once; its turn is
    // still run when it comes, cut before it starts, so its prompt is logged.
    const endIfPending = (): void => {
      if (job.record.state === 'pending' && !job.done) void job.finish(...cutState(signal.reason), turnId);
    };
    signal.addEventListener('abort', endIfPending, { once: true });
    // Cut while it was being made.
    if (signal.aborted) endIfPending();
    let result: LoggedTurn | null = null;
    let thrown: unknown = null;
    try {
      result = await running;
    } catch (error) {
      thrown = error;
    } finally {
      signal.removeEventListener('abort', endIfPending);
    }
    if (job.done) return;
    if (result === null) {
      await job.finish('failed', apiErrorOf(thrown).message, null);
    } else if (endedWhole(result) && result.log !== 'written') {
      // Its output is whole and its tools have run (sent again, they would run again), but the turn is
      // not in the log: said without the server's paths, which are the operator's (in the server's log).
      await job.finish('completed', `the answer is whole, but its turn is not in the log (${result.log}); the server's log says why`, finishOf(result, result.toolCalls.length));
    } else if (endedWhole(result)) {
      await job.finish('completed', null, finishOf(result, result.toolCalls.length));
    } else if (result.status === 'stopped' || signal.aborted) {
      // A run that heard STOP before the server did (the agent loop looks at STOP on every chunk) ends as STOP ends it.
      await job.finish(...cutState(result.status === 'stopped' ? 'stop' : signal.reason));
    } else {
      // An agent run that ended without an answer ended all the same, as its chat answer would; a failure never did.
      const ended = result.status === 'error' || result.status === 'interrupted' ? null : finishOf(result, 0);
      await job.finish('failed', result.failure?.message ?? result.agent?.message ?? `the turn ended ${result.status}`, ended);
    }
  };

  /**
   * A job as it stands: this server's own from memory; another's from its file, failed now if it
   * was left unfinished by a server that is gone. `elsewhere`: a live server sharing the data home runs it.
   */
  const findJob = async (id: string): Promise<{ record: JobRecord; live: LiveJob | null; elsewhere: boolean } | null> => {
    const live = liveJobs.get(id);
    if (live) return { record: live.record, live, elsewhere: false };
    const record = await jobs.read(id).catch(jobsUnreadable);
    if (record === null) return null;
    if (!isUnfinished(record)) return { record, live: null, elsewhere: false };
    const settled = await jobs.settle(record, deps.clock.now());
    if (settled?.failedNow) deps.log(`argo serve: job ${id}, whose server stopped, marked failed`);
    return settled && { record: settled.record, elsewhere: settled.elsewhere, live: null };
  };

  app.get('/api/jobs', async (c) => {
    const records = await jobs.list(onDamagedJob).catch(jobsUnreadable);
    const current = await Promise.all(records.map(async (record) => liveJobs.get(record.id)?.record ?? (isUnfinished(record) ? (await findJob(record.id))?.record : record)));
    return c.json(current.filter((record) => record !== undefined));
  });

  app.get('/api/jobs/:id', async (c) => {
    const found = await findJob(c.req.param('id'));
    if (found === null) throw jobNotFound(c.req.param('id'));
    c.set('session', found.record.session);
    return c.json(found.record);
  });

  app.delete('/api/jobs/:id', async (c) => {
    const id = c.req.param('id');
    const live = liveJobs.get(id);
    if (live) {
      c.set('session', live.record.session);
      await new Promise<void>((resolve) => {
        live.subscribe((event) => {
          if (event.type === 'end') resolve();
        });
        live.controller.abort('cancel' satisfies CutReason);
      });
      return c.json(live.record);
    }
    // A job that has ended stays as it ended.
    const found = await findJob(id);
    if (found === null) throw jobNotFound(id);
    c.set('session', found.record.session);
    if (found.elsewhere) throw runningElsewhere(id);
    return c.json(found.record);
  });

  app.get('/api/jobs/:id/stream', async (c) => {
    const id = c.req.param('id');
    const found = await findJob(id);
    if (found === null) throw jobNotFound(id);
    const { record, live } = found;
    c.set('session', record.session);
    // Nothing to follow for an answer without a body (a stream never read would wait for ever).
    if (c.req.method === 'HEAD') return headersOnly(c, 'text/event-stream');
    const format = new ChunkFormat({ id: `chatcmpl-${record.turn_id ?? record.id}`, created: Math.floor(Date.parse(record.created_at) / 1000), model: record.model ?? 'argo' });
    // `leave`: this server shuts down while another runs the job, which goes on there.
    const events = new Channel<JobEvent | { type: 'leave' }>();
    // Reading what is there so far and subscribing happen in one step, so no piece is missed or
    // sent twice; the calls so far go first, ahead of an end a finished job hands over at once.
    const sofar = live ? live.record : record;
    const callsSoFar = sofar.tool_calls ?? [];
    if (callsSoFar.length > 0) events.push({ type: 'tool_calls', calls: callsSoFar, first: 0 });
    const push = (event: JobEvent): void => events.push(event);
    // Another server's job is followed through its file; one that has ended ends the stream at once.
    const unsubscribe = live ? live.subscribe(push) : found.elsewhere ? followSaved(record, async () => (await findJob(id))?.record ?? null, push) : () => undefined;
    if (!live && !found.elsewhere) push({ type: 'end', record, finishReason: endedAs(record) });
    let finished!: () => void;
    const ended = new Promise<void>((resolve) => (finished = resolve));
    c.set('finished', ended);
    // This server's own job holds the shutdown itself; another's is followed within the grace, then left.
    if (!live && found.elsewhere) {
      track((reason) => {
        if (reason === 'shutdown') events.push({ type: 'leave' });
      }, ended);
    }
    const onDisconnect = (): void => events.push({ type: 'end', record, finishReason: 'stop' });
    c.req.raw.signal.addEventListener('abort', onDisconnect, { once: true });
    return sseResponse(c, async (sse) => {
      try {
        await sse.write(frame(format.role(sofar.output)));
        let frames = '';
        for (;;) {
          const event = await events.next();
          if (event.type === 'leave') {
            // The job has not ended: the stream ends as a failed answer does, saying where to follow it.
            await sse.write(frames + frame(JSON.stringify(leftAtShutdown(id).body())));
            return;
          }
          if (event.type === 'end') {
            const ended = event.record;
            if (isUnfinished(ended)) {
              // Another server's job this one could no longer read: the job has not ended, so the
              // stream ends as a failed answer does, an error chunk without [DONE], never a finish.
              await sse.write(frames + frame(JSON.stringify(new ApiError(502, ended.error ?? 'the job could not be followed', 'server_error', 'job_unreadable').body())));
              return;
            }
            const fields = { argo: { job_id: ended.id, state: ended.state, error: ended.error, turn_id: ended.turn_id } };
            // Every ended job's stream ends alike, as a resumable record of it: a last chunk and [DONE].
            // One whose answer never ended (it failed) says finish_reason null, as its record does, and
            // its argo field says failed and why; it never passes for a whole answer.
            frames += frame(format.finish(event.finishReason, fields)) + frame('[DONE]');
            await sse.write(frames);
            return;
          }
          frames += renderEvent(event, format);
          for (const more of events.drain()) {
            if (more.type === 'end' || more.type === 'leave') events.push(more);
            else frames += renderEvent(more, format);
          }
          await sse.write(frames);
          frames = '';
        }
      } finally {
        unsubscribe();
        c.req.raw.signal.removeEventListener('abort', onDisconnect);
        finished();
      }
    }, apiErrorOf);
  });

  const stopRoute = async (c: Context<Env>): Promise<Response> => {
    if (c.req.method === 'POST') {
      await deps.stop.set();
      cutAll('stop');
    } else if (c.req.method === 'DELETE') {
      await deps.stop.clear();
    }
    // `since` as `argo stop --json` gives it; the file's path stays the server's.
    const stop = await deps.stop.isSet();
    const since = stop ? await deps.stop.since() : null;
    return c.json({ stop, since: since?.toISOString() ?? null });
  };
  app.get('/api/stop', stopRoute);
  app.post('/api/stop', stopRoute);
  app.delete('/api/stop', stopRoute);

  return {
    app,
    start: async () => {
      const { failed, removed } = await recoverJobs();
      unwatch = deps.stop.watch(() => cutAll('stop'));
      return { jobsFailed: failed, jobsRemoved: removed };
    },
    drain: async (graceMs, hurry) => {
      closing = true;
      graceEnds = deps.clock.monotonic() + graceMs;
      clearTimeout(sweep);
      // Nothing starts once it is stopping: what still waits in a session's queue ends now (a chat
      // its 503, a job failed), while what runs has the grace.
      for (const entry of running) if (entry.queued?.() === true) entry.cut('shutdown');
      // Until none is left, work tracked meanwhile (a job's turn, once its job is made) included.
      const all = async (): Promise<void> => {
        while (running.size > 0) await Promise.all([...running].map((entry) => entry.settled));
      };
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
      await Promise.race([all(), grace, aborted(hurry)]);
      clearTimeout(timer);
      // Hurried (a second signal) or over: a request that comes now is told to come back at once.
      graceEnds = deps.clock.monotonic();
      graceOver = true;
      cutAll('shutdown');
      await all();
      // Heard until now: with new connections refused, STOP is how the operator ends what runs in the grace.
      unwatch();
      // Jobs save their last state after their turn settles; one that still cannot be is lost with the server.
      clearTimeout(resave);
      await Promise.all(
        [...liveJobs.entries()].map(async ([id, job]) => {
          if (!(await job.save())) deps.log(`argo serve: job ${id} could not be saved before the server stopped; its file shows it as it was last saved`);
        }),
      );
    },
    get running() {
      return running.size;
    },
    refusesUnread: (path, header) => headerRefusal(path, header) !== null || (header('transfer-encoding') === undefined && statedTooLarge(header('content-length'))),
  };
}

/**
 * A HEAD request's answer on a streamed route: Hono runs the GET handler for it and drops the body,
 * so a stream begun for it would never be read, and its request never logged.
 */
function headersOnly(c: Context<Env>, type: string): Response {
  return c.body(null, 200, { 'Content-Type': type });
}

/** Settles when `signal` aborts; never without one. */
function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal === undefined) return;
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

function nextTurnOfLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function frame(data: string): string {
  return `data: ${data}\n\n`;
}

/** One event of an answer or a job as the chunks a chat stream sends. */
function renderEvent(event: Piece | { type: 'end' | 'thrown' | 'shut_out' }, format: ChunkFormat): string {
  switch (event.type) {
    case 'text':
      return frame(format.content(event.text, event.logprobs));
    case 'thinking':
      return frame(format.reasoning(event.text, event.logprobs));
    case 'tool_calls':
      return frame(format.toolCalls(event.calls, event.first, event.logprobs));
    case 'logprobs':
      // Tokens that showed nothing (a tool call being written) still go out when they came, as Ollama's own OpenAI layer sends them.
      return frame(format.content('', event.logprobs));
    case 'tool_event':
      return frame(format.extra({ [event.event.type]: event.event }));
    default:
      return '';
  }
}

/** How a stream ends: an error chunk without [DONE], or the finish chunk, usage if asked, and [DONE]. */
function endFrames(event: TurnEvent, format: ChunkFormat, plan: AnswerPlan, apiErrorOf: (error: unknown) => ApiError): string {
  if (event.type === 'thrown') return frame(JSON.stringify(apiErrorOf(event.error).body()));
  if (event.type !== 'end') return '';
  const { result } = event;
  if (result.status === 'error') {
    const failure = result.failure ?? { kind: 'mid-stream', message: 'the answer failed' };
    return frame(JSON.stringify(apiErrorOf(fromFailure(failure)).body()));
  }
  // Interrupted with the client still reading: the shutdown cut it, and it ends as a failed answer does.
  if (result.status === 'interrupted') return frame(JSON.stringify(cutByShutdown(result.turnId).body()));
  const reason = finishOf(result, result.toolCalls.length);
  const fields = { argo: argoField(result) };
  let frames = frame(format.finish(reason, fields));
  // The usage chunk is the last data chunk: a client that reads only that one still gets the argo field.
  if (plan.includeUsage) frames += frame(format.usage(usageOf(result.promptTokens, result.completionTokens), fields));
  return frames + frame('[DONE]');
}

/** A turn that ended as its model meant it to: with its answer, or with calls of the client's tools for the client to run. */
function endedWhole(result: TurnResult): boolean {
  return result.status === 'ok' || result.status === 'tool_calls';
}

/**
 * An agent run that gave up before answering (max_iterations) was cut for length; one that ended
 * otherwise (stopped, needs_input, tool_failures, invalid_response) stops, its `argo` field saying
 * why. So does any answer STOP ended, calls of the client's tools streamed before it included.
 */
function finishOf(result: TurnResult, clientCalls: number): FinishReason {
  if (result.agent && result.status === 'max_iterations') return 'length';
  // Calls streamed before STOP are no round of tools: a client keyed on finish_reason must not run them.
  if (result.status === 'stopped') return 'stop';
  return finishReason(result.doneReason, clientCalls);
}

function argoField(result: LoggedTurn): Record<string, unknown> {
  const field: Record<string, unknown> = { turn_id: result.turnId, status: result.status, replay_policy: result.replayPolicy ?? null, log: result.log };
  if (result.agent) {
    field.stop_reason = result.agent.stopReason;
    field.iterations = result.agent.iterations;
    field.tool_calls = result.agent.toolCalls;
    field.message = result.agent.message;
    field.tools_unavailable = result.agent.unavailable;
  }
  return field;
}

/** A job cut short: its state, why, and how its answer ended (a cancelled one stops, as STOP ends a chat answer; a failed one never ended). */
function cutState(reason: unknown): ['cancelled' | 'failed', string, FinishReason | null] {
  if (reason === 'stop') return ['cancelled', 'stop signal', 'stop'];
  if (reason === 'shutdown') return ['failed', 'the server shut down before the job finished', null];
  if (reason === 'lost') return ['failed', `the server running the job lost its lock on it (the server was paused, or its disk stalled, for over ${JOB_LOCK_STALE_MS / 1000} s), so it stopped the job; its output so far is kept`, null];
  return ['cancelled', 'cancelled by request', 'stop'];
}

function runningElsewhere(id: string): ApiError {
  return new ApiError(
    409,
    `job "${id}" is run by another argo serve sharing this data home; cancel it on that server (here GET /api/jobs/${id} and its stream follow it as that server saves it, every ${OUTPUT_SAVE_MS} ms). If that server has stopped, the job is marked failed within ${JOB_LOCK_STALE_MS / 1000} s`,
    'invalid_request_error',
    'job_running_elsewhere',
  );
}

function leftAtShutdown(id: string): ApiError {
  return new ApiError(
    503,
    `this server is shutting down; job "${id}" runs on another argo serve sharing this data home, and goes on there: follow it again with GET /api/jobs/${id}/stream on any server sharing the data home (this one once it is back), which sends its output so far first`,
    'server_error',
    'shutting_down',
  );
}

/** The jobs folder cannot be read (a file where it goes, a permission changed): the operator's to mend, said as a job that cannot be saved is. */
function jobsUnreadable(error: unknown): never {
  // A damaged file says so itself, naming it.
  if (error instanceof ArgoError) throw error;
  throw new ApiError(500, `the jobs in the data home cannot be read (${messageLine(error)}); the server's operator must mend its jobs folder (a folder argo can read and write, made again when missing)`, 'server_error', 'jobs_unreadable');
}

function jobNotFound(id: string): ApiError {
  return notFound(JOB_ID.test(id) ? `no job with id "${id}"` : 'no such job (job ids are letters, digits, "_" and "-")', 'job_not_found');
}

async function readJson(c: Context<Env>): Promise<unknown> {
  let bytes: ArrayBuffer;
  try {
    bytes = await c.req.arrayBuffer();
  } catch (error) {
    // The body limit's 413; anything else is the client's connection ending mid-body (it left, or
    // it was too slow): not a failure of the server's.
    if (error instanceof ApiError) throw error;
    throw incompleteBody();
  }
  // Refused, not read with U+FFFD in place of what the client wrote (and logged so).
  const decoded = decodeUtf8(new Uint8Array(bytes));
  if (!decoded.ok) {
    const byte = decoded.byte.toString(16).toUpperCase().padStart(2, '0');
    throw badRequest(`the request body is not UTF-8 (byte 0x${byte} at offset ${decoded.offset}); send the JSON encoded as UTF-8`, null, 'invalid_json');
  }
  // A byte order mark is no part of the JSON text (RFC 8259 lets a reader ignore it).
  const text = decoded.text.replace(/^\uFEFF/, '');
  if (text.trim() === '') throw badRequest('the request body is empty; send a JSON object', null, 'invalid_json');
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    // Not V8's message: it quotes the body around the fault, a key the client sent with it, and differs by Node release.
    throw badRequest(`the request body is not valid JSON${jsonFaultPlace(text)}; send one JSON object`, null, 'invalid_json');
  }
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) {
    throw badRequest(`the request body nests arrays and objects more than ${MAX_JSON_DEPTH} deep; send a flatter one (a JSON schema or tool parameters nest a few levels)`, null, 'invalid_json');
  }
  return value;
}

function asApiError(error: unknown, log: (line: string) => void): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof UsageError) return badRequest(error.message);
  if (error instanceof ArgoError) return new ApiError(500, error.message, 'server_error', 'argo_error');
  log(`argo serve: unexpected failure: ${error instanceof Error ? error.message : String(error)}`);
  return new ApiError(500, 'unexpected server failure (details in the server log)', 'server_error', 'internal_error');
}
