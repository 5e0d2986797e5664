// A turn runner for testing the HTTP layer alone: scripted answers, every turn "logged" in memory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from '../../src/serve/app.js';
import type { ArgoServer } from '../../src/serve/app.js';
import type { TurnFailure } from '../../src/serve/errors.js';
import { listen } from '../../src/serve/listen.js';
import type { ListenOptions, Listening } from '../../src/serve/listen.js';
import type { OllamaToolCall } from '../../src/serve/openai.js';
import type { Logprob } from '../../src/ollama/transport.js';
import { fileStopSignal } from '../../src/serve/stop.js';
import type { AgentSummary, LogOutcome, LoggedTurn, RunInput, ServerDeps, ToolEvent, TurnHooks, TurnInput, TurnRunner } from '../../src/serve/types.js';

export interface Script {
  tokens?: string[];
  /** After this many tokens, wait until released (release()) or cut. */
  holdAfter?: number;
  /** Fails before any text with this failure. */
  failBefore?: TurnFailure;
  /** After all tokens, fails with this failure (a mid-stream error). */
  failAfter?: TurnFailure;
  toolCalls?: OllamaToolCall[];
  /** Waits after sending `toolCalls` until released or cut (an answer still writing more calls). */
  holdAfterToolCalls?: boolean;
  /**
   * Tokens that show nothing, handed over alone before the tool calls (a call Ollama holds back).
   * With `logprobs` asked, every token comes with `{token, logprob: FAKE_LOGPROB}`; the calls with `{token: "<call>"}`.
   */
  heldTokens?: string[];
  throws?: Error;
  /** Server-side tool events, sent before the tokens (an agent run's first round). */
  toolEvents?: ToolEvent[];
  /** Sends `toolEvents` just before the token at this index instead (after a hold there). */
  toolEventsAt?: number;
  /** Ends as an agent run: its status and summary. */
  agentEnd?: { status: string; summary: AgentSummary };
  /** Where the turn's line went, when the log could not take it (the operator's words in `problem`). */
  unlogged?: { log: LogOutcome; problem: string };
}

export const FAKE_LOGPROB = -0.5;

export class FakeRunner implements TurnRunner {
  readonly inputs: TurnInput[] = [];
  readonly logged: LoggedTurn[] = [];
  script: (input: TurnInput) => Script = (input) => ({ tokens: ['You', ' said: ', input.userPrompt] });
  private releases: (() => void)[] = [];
  /** Called when a turn starts holding. */
  onHold: (input: TurnInput) => void = () => undefined;
  /** What hold does (TurnRunner.hold): by default nothing is kept. */
  onHoldJob: NonNullable<TurnRunner['hold']> = () => Promise.resolve(null);

  hold(input: RunInput): Promise<(() => Promise<void>) | null> {
    return this.onHoldJob(input);
  }

  /** Lets every held turn go on. */
  release(): void {
    for (const release of this.releases.splice(0)) release();
  }

  async run(input: TurnInput, hooks: TurnHooks): Promise<LoggedTurn> {
    this.inputs.push(input);
    const script = this.script(input);
    if (script.throws) throw script.throws;
    let text = '';
    let streamed = 0;
    const end = (status: string, failure: TurnFailure | null, toolCalls: OllamaToolCall[] = []): LoggedTurn => {
      const result: LoggedTurn = {
        turnId: input.turnId,
        status,
        model: input.model,
        text,
        toolCalls,
        // As the runner's: Ollama's counts, or for an answer cut short, estimates (one a token here).
        promptTokens: 7,
        completionTokens: streamed,
        doneReason: status === 'ok' || status === 'tool_calls' ? 'stop' : null,
        failure,
        replayPolicy: input.mode === 'argo' ? { reason: 'session' } : null,
        agent: script.agentEnd?.summary ?? null,
        log: script.unlogged?.log ?? 'written',
        logProblem: script.unlogged?.problem ?? null,
      };
      this.logged.push(result);
      return result;
    };
    const cut = (): LoggedTurn => end(input.signal.reason === 'stop' ? 'stopped' : 'interrupted', null);
    // As Ollama: none unless asked.
    const logprobs = (token: string): Logprob[] | undefined => (input.extras.logprobs ? [{ token, logprob: FAKE_LOGPROB }] : undefined);
    const aborted = (): boolean => input.signal.aborted;
    if (aborted()) return cut();
    if (script.failBefore) return end('error', script.failBefore);
    const sendToolEvents = (): void => {
      for (const event of script.toolEvents ?? []) hooks.onToolEvent?.(event);
    };
    if (script.toolEventsAt === undefined) sendToolEvents();
    const tokens = script.tokens ?? [];
    for (let at = 0; at < tokens.length; at++) {
      if (at === script.holdAfter) {
        this.onHold(input);
        await new Promise<void>((resolve) => {
          this.releases.push(resolve);
          input.signal.addEventListener('abort', () => resolve(), { once: true });
        });
      }
      if (aborted()) return cut();
      if (at === script.toolEventsAt) sendToolEvents();
      await new Promise((resolve) => setImmediate(resolve));
      const token = tokens[at] ?? '';
      text += token;
      streamed++;
      hooks.onText(token, logprobs(token));
    }
    if (script.failAfter) return end('error', script.failAfter);
    for (const token of script.heldTokens ?? []) {
      const held = logprobs(token);
      if (held) hooks.onLogprobs?.(held);
    }
    if (script.toolCalls) {
      hooks.onToolCalls(script.toolCalls, logprobs('<call>'));
      if (script.holdAfterToolCalls === true) {
        this.onHold(input);
        await new Promise<void>((resolve) => {
          this.releases.push(resolve);
          input.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        if (aborted()) return end(input.signal.reason === 'stop' ? 'stopped' : 'interrupted', null, script.toolCalls);
      }
      return end('tool_calls', null, script.toolCalls);
    }
    return end(script.agentEnd?.status ?? 'ok', null);
  }
}

export interface TestServer {
  url: string;
  home: string;
  runner: FakeRunner;
  server: ArgoServer;
  listening: Listening;
  lines: string[];
  sessions: Map<string, { name: string; title: string; prompts: string[] }>;
}

let ids = 0;

/** `listen`: the listener's timeouts (listen's defaults otherwise), such as how long close() waits for connections after the answers. */
export async function startTestServer(options: Partial<ServerDeps> & { ollamaDown?: boolean; listen?: ListenOptions } = {}): Promise<TestServer> {
  const home = mkdtempSync(join(tmpdir(), 'argo-serve-'));
  const runner = new FakeRunner();
  const lines: string[] = [];
  const sessions = new Map<string, { name: string; title: string; prompts: string[] }>([
    ['work', { name: 'work', title: 'Work things', prompts: ['what is a monad'] }],
    ['play', { name: 'play', title: 'Games', prompts: ['chess openings'] }],
  ]);
  const { ollamaDown, listen: listenOptions, ...given } = options;
  const down = ollamaDown === true;
  const deps: ServerDeps = {
    runner,
    sessions: {
      list: (query) =>
        Promise.resolve(
          [...sessions.values()]
            .filter((s) => query === null || s.title.toLowerCase().includes(query.toLowerCase()) || s.prompts.some((p) => p.includes(query)))
            .map(({ name, title }) => ({ name, title })),
        ),
      show: (name) => {
        const found = sessions.get(name);
        return Promise.resolve(found ? async (give: (piece: string) => Promise<boolean>) => {
                await give(JSON.stringify({ session: { name, title: found.title }, turns: [] }));
              } : null);
      },
      setTitle: (name, title) => {
        const found = sessions.get(name);
        if (!found) return Promise.resolve(null);
        found.title = title;
        return Promise.resolve({ name, title });
      },
    },
    stop: fileStopSignal(home, () => new Date()),
    ollama: {
      host: 'http://127.0.0.1:11434',
      version: () => (down ? Promise.reject(new Error('connection refused')) : Promise.resolve('0.12.0')),
      models: () =>
        down ? Promise.reject(new Error('connection refused')) : Promise.resolve([{ name: 'argo:latest', modified_at: '2026-01-15T09:30:00Z' }]),
      answeringModel: (installed) => Promise.resolve(installed[0]),
    },
    clock: { now: () => new Date(), monotonic: () => performance.now() },
    newId: () => `id${(++ids).toString().padStart(6, '0')}`,
    jobsDir: join(home, 'jobs'),
    limits: { maxBodyBytes: 64 * 1024, jobRetentionDays: 30 },
    apiKey: null,
    argoDefaults: { session: 'default', replay: { kind: 'none' } },
    agentMode: false,
    log: (line) => lines.push(line),
    ...given,
  };
  const server = createServer(deps);
  await server.start();
  const listening = await listen(server, '127.0.0.1', 0, listenOptions);
  return { url: listening.url, home, runner, server, listening, lines, sessions };
}
