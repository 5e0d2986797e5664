// Log lines and journal files that earlier versions wrote (test/fixtures/earlier-versions), read by
// today's readers: every one is a turn, and each earlier shape is read as what it meant then.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogEntrySchema } from '../../src/log/entry-schema.js';
import { entryProblem, parseEntry } from '../../src/log/entry.js';
import type { LogEntry } from '../../src/log/entry.js';
import { checkUnfinished, ownerState, readUnfinished, thisProcess } from '../../src/log/unfinished.js';
import { copyEarlierHome, earlierHome } from '../support/earlier-homes.js';

function linesOf(home: string): string[] {
  const dir = join(earlierHome(home), 'logs');
  return readdirSync(dir)
    .sort()
    .flatMap((file) => readFileSync(join(dir, file), 'utf8').split('\n'))
    .filter((line) => line !== '');
}

function entryOf(home: string, id: string): LogEntry {
  const line = linesOf(home).find((text) => text.startsWith(`{"id":${JSON.stringify(id)}`));
  const entry = line === undefined ? null : parseEntry(line);
  if (entry === null) throw new Error(`no readable line ${id} in ${home}`);
  return entry;
}

describe('every log line an earlier version wrote is a turn', () => {
  it.each([
    ['caf6b5f-first', 6],
    ['92c02f1-forks', 9],
    ['5be5160-agent-serve', 13],
    ['c24b503-journal', 2],
    ['f09f18a-journal-owner', 2],
  ])('%s: %i lines, each a turn to the hand check, to zod and to entryProblem', async (home, count) => {
    const lines = linesOf(home);
    expect(lines).toHaveLength(count);
    for (const line of lines) {
      const value: unknown = JSON.parse(line);
      expect(parseEntry(line), line.slice(0, 40)).not.toBeNull();
      expect(LogEntrySchema.safeParse(value).success, line.slice(0, 40)).toBe(true);
      expect(await entryProblem(value)).toBeNull();
    }
  });
});

describe('each earlier shape of a line, by a line that has it', () => {
  it.each<[string, string, string, (entry: LogEntry) => unknown, unknown]>([
    // Before 393f2fd every decision was logged, and the count of those left out did not exist.
    ['caf6b5f-first', 'AXWECa_LkHa0', 'a replay policy without decisions_omitted', (e) => [e.replay_policy?.decisions.length, e.replay_policy?.decisions_omitted], [1, undefined]],
    ['caf6b5f-first', 'eeYvI49wMinq', 'no request fields (request_sha256, options, num_ctx, …)', (e) => [e.request_sha256, e.options, e.num_ctx, e.prompt_tokens_estimate], [undefined, undefined, undefined, undefined]],
    ['caf6b5f-first', 'Q4n49ArHfFiV', 'an error turn', (e) => [e.status, e.model, e.model_response], ['error', 'nosuch', '']],
    ['92c02f1-forks', '-0JcYheOO9JI', 'an id starting with "-" (ids no longer do)', (e) => e.id.startsWith('-'), true],
    ['92c02f1-forks', 'RaD25ESPlSx2', 'a session named with a leading dot', (e) => e.session, '.notes'],
    ['5be5160-agent-serve', 'tXL_rGdEg5WZ', 'compacted without round, no tool_definitions_sha256', (e) => [e.compacted?.[0]?.round, e.compacted?.[0]?.kind, e.tool_definitions_sha256], [undefined, 'saved', undefined]],
    ['5be5160-agent-serve', 'xD6F2tdalet4', "an agent run's own ending", (e) => [e.status, e.stop_reason], ['max_iterations', 'max_iterations']],
    ['5be5160-agent-serve', 'AsekH0Zd07af', 'a serve turn in plain mode, replay off', (e) => [e.session, e.replay_policy], ['api', null]],
    ['c24b503-journal', 'gCOt9TFpFNL7', 'an agent run with its tool definitions kept', (e) => typeof e.tool_definitions_sha256, 'string'],
  ])('%s %s: %s', (home, id, _shape, field, expected) => {
    expect(field(entryOf(home, id))).toEqual(expected);
  });
});

describe('journal files of earlier versions (unfinished/)', () => {
  it.each([
    ['c24b503-journal', '5Xuk8JmquXSH.json', ['boot', 'host', 'pid']],
    ['c24b503-journal', 'PtUFvuFSMf_5.json', ['boot', 'host', 'pid']],
    ['f09f18a-journal-owner', 'GBoXtmHK2MY6.json', ['boot', 'host', 'machine', 'pid', 'start']],
    ['f09f18a-journal-owner', 'lNPy1swgckOI.json', ['boot', 'host', 'machine', 'pid', 'start']],
  ])('%s %s: an owner with only %j reads, checks, and is judged', async (home, file, fields) => {
    // As written: another machine's (its host is not this one), so only that machine may log it.
    const written = readUnfinished(earlierHome(home), file);
    if (written === null || !('owner' in written)) throw new Error(`${file} is not read: ${JSON.stringify(written)}`);
    expect(Object.keys(written.owner).sort()).toEqual(fields);
    expect(ownerState(written.owner, thisProcess())).toBe('elsewhere');
    expect(await checkUnfinished(written.value)).toHaveProperty('turn');
    // Made this machine's, by an argo that has ended: a turn to log.
    const copied = readUnfinished(copyEarlierHome(home), file);
    if (copied === null || !('owner' in copied)) throw new Error(`${file} is not read in the copy`);
    expect(ownerState(copied.owner, thisProcess())).toBe('dead');
  });
});
