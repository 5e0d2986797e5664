import { isIP } from 'node:net';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { toolsConfigOf } from '../agent/answer.js';
import { RuntimeError, messageLine, shownPath } from '../errors.js';
import { errnoOf, readableByOthers } from '../log/fs.js';
import { SERVER_HINTS } from '../ollama/fix-hints.js';
import { plainReason } from '../ollama/plain-reason.js';
import { KeptAnswers, ModelWindows, OllamaTransport } from '../ollama/transport.js';
import type { OllamaVersion } from '../ollama/versions.js';
import { createServer } from '../serve/app.js';
import { checkApiKey, requireKeyFor } from '../serve/auth.js';
import { listen, urlIpv6 } from '../serve/listen.js';
import { fileStopSignal } from '../serve/stop.js';
import { ollamaInfo, sessionStore } from '../serve/stores.js';
import { turnRunner } from '../serve/turn-runner.js';
import { loadTurnModules } from '../turn/turn.js';
import { loadToolModules } from '../tools/catalog.js';
import { mcpPool } from '../tools/mcp-pool.js';
import { settingsOf } from './common.js';
import type { Io } from './io.js';
import { STOP_SIGNALS } from './outcome.js';
import type { Outcome, ReportOutcome, StopSignal } from './outcome.js';
import { recoverUnfinishedTurns } from './recovery.js';
import { toolRoot } from './root.js';
import { untrustedTextFor } from '../output/terminal-text.js';

interface ServeFlags {
  host: string;
  port: number;
  root?: string;
  allowSideEffects: boolean;
}

/** An IP address, or a host name (labels of letters, digits and dashes; not all digits, which would be a mistyped IPv4). */
export function parseBindHost(value: string): string {
  const host = value.trim();
  const name = /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(host) && !/^[\d.]+$/.test(host);
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  // In a URL's spelling: the one the printed URL shows and a client's Host header is matched against.
  if (isIP(bare) === 6) return urlIpv6(bare);
  if (isIP(bare) !== 0) return bare;
  if (name) return host;
  throw new InvalidArgumentError('use an IP address (127.0.0.1, ::1, 0.0.0.0) or a host name.');
}

function parsePort(value: string): number {
  const port = Number(value);
  if (/^\d+$/.test(value) && port <= 65535) return port;
  throw new InvalidArgumentError('use a port number from 0 to 65535 (0 picks a free one).');
}

export function registerServe(program: Command, io: Io, setOutcome: ReportOutcome): void {
  program
    .command('serve')
    .description('an OpenAI-compatible server with sessions, replay, jobs and a stop signal (docs/serve.md)')
    .option('--host <address>', 'address to bind; anything but loopback needs ARGO_API_KEY', parseBindHost, '127.0.0.1')
    .option('--port <n>', 'port; 0 picks a free one', parsePort, 10007)
    .option('--root <dir>', 'where server-side tools may read and write (default: the working directory)')
    .option('--allow-side-effects', 'let server-side tools write, edit and run commands without asking (nobody can be asked on a server); needs an API key', false)
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    .action(async (flags: ServeFlags, command: Command) => setOutcome(await serve(command, flags, io)));
}

/** How long the server trusts a model's `num_ctx`, and Ollama's version, before asking Ollama again. */
const MODEL_WINDOW_MAX_AGE_MS = 60_000;

/** Runs until SIGTERM or SIGINT, then shuts down gracefully. */
async function serve(command: Command, flags: ServeFlags, io: Io): Promise<Outcome> {
  const settings = settingsOf(command, ['session', 'replay', 'model']);
  const { apiKey: configured, apiKeySource } = settings.serve;
  const apiKey = requireKeyFor(flags.host, configured === null ? undefined : checkApiKey(configured, apiKeySource), flags.allowSideEffects);
  // Before the first request: a turn a killed server left unfinished goes into the log ahead of new ones.
  await recoverUnfinishedTurns(settings, io, 'argo serve');
  // Now, while file descriptors are plenty: a module a turn (or its tools) would load later, under
  // load, could fail to. Every server runs tools a request names; MCP servers are started on first use.
  await Promise.all([loadTurnModules(), loadToolModules(toolsConfigOf(settings.agent))]);
  const openMode = settings.serve.apiKeyInConfig ? await readableByOthers(settings.paths.config) : null;
  // Request paths, session headers, Ollama's errors and data home paths are quoted: shown, never obeyed, on a terminal.
  const log = (line: string): void => {
    io.stderr.write(`${untrustedTextFor(io.stderr)(line)}\n`);
  };
  if (openMode !== null) {
    log(`argo serve: ${shownPath(settings.paths.config)} holds an API key and other users can read it (mode ${openMode.toString(8).padStart(3, '0')}); run "chmod 600 ${settings.paths.config}"`);
  }
  // Checked at start, so a typo fails now, not at the first tool call.
  const root = await toolRoot(flags.root);
  const mcp = mcpPool();
  const ollama = ollamaInfo(settings.host);
  const modelWindows = new ModelWindows(MODEL_WINDOW_MAX_AGE_MS);
  const versions = new KeptAnswers<OllamaVersion | null>(MODEL_WINDOW_MAX_AGE_MS);
  const modelCapabilities = new KeptAnswers<readonly string[]>(MODEL_WINDOW_MAX_AGE_MS);
  const stop = fileStopSignal(settings.home, io.now);
  const server = createServer({
    runner: turnRunner(settings, {
      transport: () =>
        new OllamaTransport({
          host: settings.host,
          attempts: settings.retries.attempts,
          initialDelayMs: settings.retries.initialDelayMs,
          idleMs: settings.timeouts.idleMs,
          modelWindows,
          versions,
          modelCapabilities,
          hints: SERVER_HINTS,
          // A busy Ollama's Retry-After goes to the client with the 503, not spent holding its request.
          maxRetryAfterMs: 0,
        }),
      now: io.now,
      clock: io.clock,
      rescue: io.rescue,
      log,
      tools: { root, allowSideEffects: flags.allowSideEffects, connectMcp: mcp.connect },
    }),
    sessions: sessionStore(settings.paths, settings.timeouts.lockWaitMs, settings.home),
    stop,
    ollama,
    clock: { now: io.now, monotonic: io.clock },
    newId: io.newId,
    jobsDir: resolve(settings.home, 'jobs'),
    home: settings.home,
    limits: { maxBodyBytes: settings.serve.maxBodyBytes, jobRetentionDays: settings.serve.jobRetentionDays },
    apiKey,
    argoDefaults: { session: settings.session, replay: settings.defaultReplay, replaySource: settings.defaultReplaySource },
    agentMode: true,
    log,
  });
  const { jobsFailed, jobsRemoved } = await server.start();
  const left = [jobsFailed.running > 0 && `${jobsFailed.running} running`, jobsFailed.pending > 0 && `${jobsFailed.pending} pending`].filter((part) => part !== false);
  if (left.length > 0) io.stderr.write(`argo serve: marked failed the job(s) a previous server left unfinished: ${left.join(', ')}\n`);
  if (jobsRemoved > 0) io.stderr.write(`argo serve: removed ${jobsRemoved} job file(s) older than ${settings.serve.jobRetentionDays} days\n`);
  let listening;
  try {
    listening = await listen(server, flags.host, flags.port, { maxConnections: settings.serve.maxConnections, log });
  } catch (error) {
    const code = errnoOf(error);
    const why = code === 'EADDRINUSE' ? 'the port is in use (pick another with --port, or 0 for any free one)' : code === 'EACCES' ? 'permission denied (ports below 1024 need privileges)' : (error as Error).message;
    throw new RuntimeError(`cannot listen on ${flags.host}:${flags.port}: ${why}`, { cause: error });
  }
  // Only once listening: a start that fails (the port in use) or a restart must not lift an operator's STOP.
  const stopNote = await stop.clearStale().then(
    (left) => {
      if (left?.kind === 'cleared') return `cleared a STOP left from before this boot (set ${left.since.toISOString()})`;
      if (left?.kind === 'kept') return `STOP is set (since ${left.since.toISOString()}): answers and jobs stop until "argo stop --clear" or DELETE /api/stop`;
      return null;
    },
    // Removing it failed: it stays set, and the server runs as it would with any STOP.
    (error: unknown) => `a STOP left from before this boot could not be cleared (${messageLine(error)}), so it stays set: answers and jobs stop until "argo stop --clear" or DELETE /api/stop`,
  );
  if (stopNote !== null) log(`argo serve: ${stopNote}`);
  // Not a reason to refuse to start (Ollama may come up later), but worth one line now rather than a 502 later.
  let stopping = false;
  ollama.version().catch((error: unknown) => {
    if (stopping) return;
    log(`argo serve: Ollama at ${settings.host} does not answer (${plainReason(error)}); requests will fail until it does: start it with "ollama serve", or set OLLAMA_HOST to where it runs`);
  });
  // The data home and the tools root are directory names: a control in one is shown, not obeyed.
  io.stdout.write(`${untrustedTextFor(io.stdout)(`argo serve: listening on ${listening.url} (data ${shownPath(settings.home)}, tools root ${shownPath(root)}${flags.allowSideEffects ? ', side effects allowed' : ''})`)}\n`);
  if (apiKey === null) {
    io.stderr.write('argo serve: no API key, so every user of this machine can use this server: read its sessions and jobs, and start answers; on a shared machine set ARGO_API_KEY or "serve.apiKey" in config.json\n');
  }
  const signal = await new Promise<StopSignal>((done) => {
    const stopListening = io.onInterrupt((name) => {
      stopListening();
      done(name);
    });
  });
  stopping = true;
  io.stderr.write(`argo serve: ${signal}: finishing running answers (up to ${settings.serve.shutdownGraceMs} ms; again to cut them now)\n`);
  // A second signal cuts the grace short: open answers are cut and still logged. A third one is
  // main's (it quits at once).
  const hurry = new AbortController();
  const cut: { by: StopSignal | null } = { by: null };
  const stopHearing = io.onInterrupt((again) => {
    io.stderr.write(`argo serve: ${again} again: cutting running answers now\n`);
    cut.by = again;
    hurry.abort();
  });
  try {
    await listening.close(settings.serve.shutdownGraceMs, hurry.signal);
    await mcp.close();
  } finally {
    stopHearing();
  }
  return cut.by === null ? 'ok' : STOP_SIGNALS[cut.by];
}
