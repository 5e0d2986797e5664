// argo rerun's use case: find a logged turn, rebuild the exact request it sent from what the log
// kept (replayed turn ids and decisions, model, options, system prompt, style), prove it with the
// logged hash, and plan the same request again, optionally for another model or other options.
import type { Settings } from '../config/settings.js';
import { stat } from 'node:fs/promises';
import type { LogEntry } from '../log/entry.js';
import { listLogFiles } from '../log/files.js';
import type { DataPaths } from '../log/writer.js';
import { QUEUED_ERROR } from '../log/unfinished.js';
import { findIndexedTurns } from '../sessions/turn-index.js';
import { ScanStats, scanEntries } from '../log/scan.js';
import { applyBudget } from '../replay/budget.js';
import { classifyEntry, typedPart } from '../replay/classify.js';
import type { CandidateTurn } from '../replay/filter.js';
import type { ReplayPlan } from '../replay/plan.js';
import { buildRequest } from '../replay/prompt.js';
import type { ModelOptions, OllamaRequest } from '../replay/prompt.js';
import { styleInstructions } from '../replay/style.js';
import type { ReplayPolicyLog } from '../replay/types.js';
import { requestSha256 } from './request-facts.js';

/** Bytes of the newest log files searched before the session indexes: a rerun is mostly of a recent turn. */
const RECENT_BYTES = 32 << 20;

/**
 * The turns with these ids, wherever they are in the log: the newest files first (only lines holding
 * one of the ids, a raw byte search, are parsed), then the places the session indexes name for them
 * (the index of `near.session`, a session's name, first; each place checked against the log), then
 * the older files. A turn's id is 12 random characters: a turn is in the log once (a line copied by
 * hand is the same turn again).
 */
export async function findTurns(
  paths: DataPaths,
  ids: readonly string[],
  near: { session?: string; recentBytes?: number; stats?: ScanStats } = {},
): Promise<Map<string, LogEntry>> {
  // Counted for the caller: an unreadable line holding a wanted id may be the turn not found.
  const stats = near.stats ?? new ScanStats();
  const wanted = new Set(ids);
  const found = new Map<string, LogEntry>();
  if (wanted.size === 0) return found;
  const files = await listLogFiles(paths.logs, stats);
  let recent = files.length;
  for (let bytes = 0; recent > 0 && bytes < (near.recentBytes ?? RECENT_BYTES); recent--) bytes += await sizeOf(files[recent - 1] ?? '');
  await searchBackward(files.slice(recent), wanted, found, stats);
  if (wanted.size === 0) return found;
  for (const [id, entry] of findIndexedTurns(paths, wanted, near.session)) {
    found.set(id, entry);
    wanted.delete(id);
  }
  await searchBackward(files.slice(0, recent), wanted, found, stats);
  return found;
}

/** Moves each id of `wanted` found in `files` (newest first) to `found`. */
async function searchBackward(files: readonly string[], wanted: Set<string>, found: Map<string, LogEntry>, stats: ScanStats): Promise<void> {
  if (wanted.size === 0 || files.length === 0) return;
  for await (const { entry } of scanEntries(files, stats, { needle: { kind: 'json-string', values: [...wanted] }, backward: true })) {
    if (!wanted.delete(entry.id)) continue;
    found.set(entry.id, entry);
    if (wanted.size === 0) break;
  }
}

async function sizeOf(file: string): Promise<number> {
  return stat(file).then((stats) => stats.size, () => 0);
}

/** What a turn not found past unreadable lines may be: one of them. */
export function unreadableLines(unreadable: number): string {
  return unreadable === 1 ? 'the unreadable log line skipped (argo logs check lists it)' : `one of the ${unreadable} unreadable log lines skipped (argo logs check lists them)`;
}

export interface RerunChanges {
  model?: string;
  options?: ModelOptions;
}

export type Rebuilt =
  | { ok: true; request: OllamaRequest; sha256: string; plan: ReplayPlan; options: ModelOptions }
  | { ok: false; reason: string };

/**
 * The request `entry` sent, rebuilt, proved against its logged hash, then changed as asked. The
 * style texts (persona, mode, verbosity, confidence) are today's from settings: if config.json
 * changed them since, the hash says so and the rebuild is refused.
 */
export function rebuildTurn(entry: LogEntry, replayed: ReadonlyMap<string, LogEntry>, settings: Settings, changes: RerunChanges = {}, unreadable = 0): Rebuilt {
  // An agent turn sent many requests (tools, memo, results): one of them again is not the turn. Its
  // hash is its first request's, which holds the memo as it was then: the log does not keep it, so
  // not even that request could be rebuilt and proved.
  // An agent turn logs `tools` even when none was available (an MCP server that did not start).
  if (entry.tools !== undefined) {
    const again = entry.tools.length > 0 ? `; ask it again with --tools ${entry.tools.join(',')}` : '; ask it again with the --tools it was asked with';
    return {
      ok: false,
      reason: `turn ${entry.id} was an agent run${entry.tools.length > 0 ? ` (tools ${entry.tools.join(', ')})` : ' (no tool was available)'}, and rerun sends one request, not a tool loop (its request_sha256 is of the run's first request, with the memo of that moment, which the log does not keep)${again}`,
    };
  }
  if (entry.client_messages !== undefined) {
    return { ok: false, reason: `turn ${entry.id} was asked through argo serve with the client's own ${entry.client_messages === 1 ? 'message, which is' : `${entry.client_messages} messages, which are`} not logged, so its request cannot be rebuilt; send it again from the client` };
  }
  if (entry.client_fields !== undefined && entry.client_fields.length > 0) {
    return { ok: false, reason: `turn ${entry.id} was asked through argo serve with the client's ${entry.client_fields.join(', ')}, which ${entry.client_fields.length === 1 ? 'is' : 'are'} not logged, so its request cannot be rebuilt; send it again from the client` };
  }
  if (entry.request_sha256 === undefined) {
    if (entry.error === QUEUED_ERROR) return { ok: false, reason: `turn ${entry.id} was never sent to the model (argo serve ended while it waited in its session's queue), so there is no request to rebuild; ask it again` };
    return { ok: false, reason: `turn ${entry.id} was logged before Argo kept a hash of each request, so its request cannot be proved` };
  }
  const missing = entry.replayed_ids.find((id) => !replayed.has(id));
  if (missing !== undefined) {
    return { ok: false, reason: `turn ${entry.id} replayed turn ${missing}, which is no longer in the log (deleted or pruned)${unreadable > 0 ? `, or may be ${unreadableLines(unreadable)}` : ''}, so its request cannot be rebuilt` };
  }
  const logged = entry.replay_policy;
  // The earliest lines have no decisions_omitted: they left no decision out.
  const policy: ReplayPolicyLog | null = logged === null ? null : { ...logged, decisions_omitted: logged.decisions_omitted ?? 0 };
  let instructions: string[];
  try {
    instructions = [
      // Earlier versions logged an empty --system that was never sent.
      ...(entry.system !== undefined && entry.system !== '' ? [entry.system] : []),
      ...styleInstructions(settings.style, { mode: entry.active_mode, persona: entry.persona, verbosity: entry.verbosity }),
      ...(policy !== null ? [settings.replay.confidence[policy.context_strength]] : []),
    ];
  } catch (error) {
    return { ok: false, reason: `turn ${entry.id} used a style that config.json no longer has (${error instanceof Error ? error.message : String(error)})` };
  }
  // The sent turns again, with their protected marks: the budget shortens them exactly as it did.
  const protectedIds = new Set((policy?.decisions ?? []).filter((decision) => decision.protected).map((decision) => decision.id));
  const candidates: CandidateTurn[] = entry.replayed_ids.flatMap((id) => {
    const turn = replayed.get(id);
    return turn === undefined ? [] : [{ id, prompt: turn.user_prompt, response: turn.model_response, entry_type: turn.entry_type, protected: protectedIds.has(id) }];
  });
  const replay = policy === null ? [] : applyBudget(candidates, policy.budget).used;
  const build = (model: string, options: ModelOptions): OllamaRequest =>
    buildRequest(
      { instructions, replay, input: entry.user_prompt },
      {
        endpoint: entry.endpoint,
        model,
        stream: entry.ollama_stream ?? true,
        options,
        ...(entry.keep_alive !== undefined ? { keepAlive: entry.keep_alive } : {}),
        ...(entry.think !== undefined ? { think: entry.think } : {}),
      },
    );
  const original = build(entry.model, entry.options ?? {});
  const sha256 = requestSha256(original);
  if (sha256 !== entry.request_sha256) {
    return {
      ok: false,
      reason: `the rebuilt request of turn ${entry.id} is not the one it sent (sha256 ${sha256.slice(0, 12)}… ≠ ${entry.request_sha256.slice(0, 12)}…): a persona, mode, verbosity or confidence text in config.json, or a replayed turn, changed since`,
    };
  }
  const options = { ...entry.options, ...changes.options };
  const request = build(changes.model ?? entry.model, options);
  return {
    ok: true,
    request,
    sha256,
    options,
    // Typed by today's rules, as any new turn is: its index line says they are the ones in force.
    plan: { entryType: classifyEntry(typedPart(entry.user_prompt, entry.typed_chars), settings.replay.classify), verbosity: entry.verbosity, replayPolicy: policy, replayedIds: entry.replayed_ids, request },
  };
}
