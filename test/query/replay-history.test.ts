import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import type * as FsModule from '../../src/log/fs.js';

// A data home where no index can be saved, for one test: canWrite answers false while `readOnly` is set.
const home = vi.hoisted(() => ({ readOnly: false }));
vi.mock('../../src/log/fs.js', async (original) => {
  const fs = await original<typeof FsModule>();
  return { ...fs, canWrite: async (path: string) => !home.readOnly && (await fs.canWrite(path)) };
});
import { loadHistory, loadSessionEntries, openReplaySource, rebuildIndex } from '../../src/sessions/turns.js';
import type { ReplaySource } from '../../src/sessions/turns.js';
import { planWithHistory } from '../../src/turn/turn.js';
import type { PlanInput } from '../../src/replay/plan.js';
import { recordTurn } from '../../src/sessions/record-turn.js';
import { classifyEntry, rulesFingerprint } from '../../src/replay/classify.js';
import { LOAD_BATCH, planTurn } from '../../src/replay/plan.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import type { ReplayPolicy } from '../../src/replay/policy.js';
import type { HistoryTurn, ReplaySpec } from '../../src/replay/types.js';
import { indexPath, openSession, readSession } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { readIndex } from '../../src/sessions/turn-index.js';
import { makeEntry, tempData } from './helpers.js';
import type { Home } from './helpers.js';
import { defined } from '../support/defined.js';
import { makePlanInput } from '../support/plan-input.js';

const RULES = DEFAULT_REPLAY_POLICY.classify;
const TURNS = 300;

/** A long session written through the real writer, each index line caching its type under RULES. */
async function longSession(): Promise<Home & { session: SessionRecord }> {
  const data = tempData();
  const opened = await openSession(data.paths.sessions, 'long', '2025-01-02T09:00:00.000Z');
  for (let i = 0; i < TURNS; i++) {
    const prompt = i % 5 === 0 ? `Why does step ${i} matter` : `Write step ${i} of the migration`;
    const entry = makeEntry({
      id: `r${String(i).padStart(11, '0')}`,
      session: 'long',
      session_id: opened.id,
      user_prompt: prompt,
      model_response: `Step ${i}: ${'y'.repeat(250)}`,
      entry_type: classifyEntry(prompt, RULES),
    });
    await recordTurn(data.paths, opened, entry, '2025-01-02', rulesFingerprint(RULES));
  }
  return { ...data, session: defined(await readSession(data.paths.sessions, 'long'), 'session long') };
}

function inputFor(policy: ReplayPolicy, spec: ReplaySpec) {
  return (history: HistoryTurn[]): PlanInput => makePlanInput({ input: 'Add a rollback step', spec, history, policy });
}

const planFor = (policy: ReplayPolicy, spec: ReplaySpec) => (history: HistoryTurn[]) => planTurn(inputFor(policy, spec)(history));

/** Plans through the index as a turn does, recording which turns' words were read. */
async function planThroughIndex(data: Home & { session: SessionRecord }, policy: ReplayPolicy, spec: ReplaySpec, reads: string[] = []) {
  const open = async (rebuild: boolean): Promise<ReplaySource> => {
    const source = await openReplaySource(data.paths, data.session, spec, policy.classify, rebuild);
    return { ...source, read: (ids) => (reads.push(...ids), source.read(ids)) };
  };
  return planWithHistory(open, inputFor(policy, spec), data.session.name);
}

describe('planning through the index', () => {
  it('with the rules the index was written under, reads only the turns the budget reaches', async () => {
    const data = await longSession();
    const loads: string[] = [];
    const spec = { kind: 'session' } as const;
    const lazy = await planThroughIndex(data, DEFAULT_REPLAY_POLICY, spec, loads);
    const eager = planFor(DEFAULT_REPLAY_POLICY, spec)(await loadHistory(data.paths, data.session, spec));
    expect(JSON.stringify(lazy)).toBe(JSON.stringify(eager));
    const used = lazy.replayPolicy?.entries_used ?? 0;
    expect(used).toBeGreaterThan(2);
    // The turns the budget walk reaches (one past the cap), read in batches: never much more.
    expect(new Set(loads).size).toBe(loads.length);
    expect(loads.length).toBeGreaterThanOrEqual(used + 1);
    expect(loads.length).toBeLessThan(used + 1 + LOAD_BATCH);
  });

  it('under other rules, rebuilds the index once with them, then reads only what the budget reaches', async () => {
    const data = await longSession();
    const changed = { ...DEFAULT_REPLAY_POLICY, classify: { ...RULES, questionOpeners: ['how'] } };
    const spec = { kind: 'session' } as const;
    const loads: string[] = [];
    const result = await planThroughIndex(data, changed, spec, loads);
    expect(JSON.stringify(result)).toBe(JSON.stringify(planFor(changed, spec)(await loadHistory(data.paths, data.session, spec))));
    // "Why …" turns are no longer questions under these rules.
    expect(result.replayPolicy?.decisions.some((d) => d.entry_type === 'question')).toBe(false);
    expect((await readIndex(data.paths.sessions, 'long'))?.every((line) => line.rules === rulesFingerprint(changed.classify))).toBe(true);
    expect(loads.length).toBeLessThan((result.replayPolicy?.entries_used ?? 0) + 1 + LOAD_BATCH);
  });

  it('under other rules, where no index can be saved, classifies anew the turns it reads and rebuilds nothing', async () => {
    const data = await longSession();
    const changed = { ...DEFAULT_REPLAY_POLICY, classify: { ...RULES, questionOpeners: ['how'] } };
    const spec = { kind: 'session' } as const;
    const before = readFileSync(indexPath(data.paths.sessions, 'long'), 'utf8');
    const loads: string[] = [];
    home.readOnly = true;
    try {
      const result = await planThroughIndex(data, changed, spec, loads);
      expect(JSON.stringify(result)).toBe(JSON.stringify(planFor(changed, spec)(await loadHistory(data.paths, data.session, spec))));
    } finally {
      home.readOnly = false;
    }
    expect(new Set(loads).size).toBe(TURNS);
    expect(readFileSync(indexPath(data.paths.sessions, 'long'), 'utf8')).toBe(before);
  });

  it('a stale line met while planning rebuilds the index and plans again', async () => {
    const data = await longSession();
    const { paths, session } = data;
    const spec = { kind: 'last', count: 3 } as const;
    const expected = planFor(DEFAULT_REPLAY_POLICY, spec)(await loadHistory(paths, session, spec));
    // Point the newest index line (always read: it is protected) at the previous turn's line.
    const lines = readFileSync(indexPath(paths.sessions, 'long'), 'utf8').trimEnd().split('\n');
    const last = JSON.parse(lines.at(-1) ?? '{}') as { offset: number; length: number };
    const previous = JSON.parse(lines.at(-2) ?? '{}') as { offset: number; length: number };
    lines[lines.length - 1] = JSON.stringify({ ...JSON.parse(lines.at(-1) ?? '{}'), offset: previous.offset, length: previous.length });
    writeFileSync(indexPath(paths.sessions, 'long'), `${lines.join('\n')}\n`);
    expect(last.offset).not.toBe(previous.offset);

    const result = await planThroughIndex(data, DEFAULT_REPLAY_POLICY, spec);
    expect(JSON.stringify(result)).toBe(JSON.stringify(expected));
    const repaired = (await readIndex(paths.sessions, 'long')) ?? [];
    expect(repaired.at(-1)?.offset).toBe(last.offset);
    expect(repaired.every((line) => line.rules === rulesFingerprint(RULES))).toBe(true);
  });

  it('an index a reader rebuilt without the rules (sessions show on a damaged one) is rebuilt with them by the next replay, which then reads only what the budget reaches', async () => {
    const data = await longSession();
    const { paths, session } = data;
    const path = indexPath(paths.sessions, 'long');
    writeFileSync(path, readFileSync(path, 'utf8').replace(/"length":\d+/, '"length":1000000000000'));
    expect(await loadSessionEntries(paths, session)).toHaveLength(TURNS);
    expect((await readIndex(paths.sessions, 'long'))?.some((line) => line.rules === undefined)).toBe(true);

    const loads: string[] = [];
    const spec = { kind: 'session' } as const;
    const result = await planThroughIndex(data, DEFAULT_REPLAY_POLICY, spec, loads);
    expect(JSON.stringify(result)).toBe(JSON.stringify(planFor(DEFAULT_REPLAY_POLICY, spec)(await loadHistory(paths, session, spec))));
    expect(loads.length).toBeLessThan((result.replayPolicy?.entries_used ?? 0) + 1 + LOAD_BATCH);
    expect((await readIndex(paths.sessions, 'long'))?.every((line) => line.rules === rulesFingerprint(RULES))).toBe(true);
  });

  it('rebuildIndex with rules classifies each turn under them and records their fingerprint', async () => {
    const { paths, session } = await longSession();
    const changed = { ...RULES, questionOpeners: ['how'] };
    const lines = await rebuildIndex(paths, session, { classify: changed });
    expect(lines).toHaveLength(TURNS);
    expect(lines.every((line) => line.rules === rulesFingerprint(changed))).toBe(true);
    expect(lines.filter((line) => line.type === 'question')).toEqual([]);
    const plain = await rebuildIndex(paths, session);
    expect(plain.every((line) => line.rules === undefined)).toBe(true);
    expect(plain.filter((line) => line.type === 'question')).toHaveLength(TURNS / 5);
  });
});
