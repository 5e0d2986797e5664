// argo rerun finds a turn (and the turns it replayed) through the newest log files, then the places
// the session indexes name, then the older files: it must find what a search of the whole log, newest
// file first, finds — whatever the indexes say.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/log/entry.js';
import { listLogFiles } from '../../src/log/files.js';
import { ScanStats, scanEntries } from '../../src/log/scan.js';
import type { DataPaths } from '../../src/log/writer.js';
import { forkSession } from '../../src/sessions/manage.js';
import { findIndexedTurns } from '../../src/sessions/turn-index.js';
import { findTurns } from '../../src/turn/rerun.js';
import { defined } from '../support/defined.js';
import { makeEntry, recordTurns, tempData, writeEntries } from '../query/helpers.js';

/** The whole log searched newest file first, as findTurns did before it asked the indexes. */
async function everywhere(paths: DataPaths, ids: readonly string[]): Promise<Map<string, LogEntry>> {
  const wanted = new Set(ids);
  const found = new Map<string, LogEntry>();
  if (wanted.size === 0) return found;
  for await (const { entry } of scanEntries(await listLogFiles(paths.logs), new ScanStats(), { needle: { kind: 'json-string', values: [...wanted] }, backward: true })) {
    if (wanted.has(entry.id) && !found.has(entry.id)) found.set(entry.id, entry);
  }
  return found;
}

/** Two sessions over three days, a fork of one, and a removed session's turn; the newest day holds only `recent`. */
async function home() {
  const { paths } = tempData();
  const work = await recordTurns(paths, 'work', 3, { date: '2025-01-02' });
  const play = await recordTurns(paths, 'play', 2, { date: '2025-01-03' });
  const fork = await forkSession(paths, work.session, work.entries[1]?.id, 'try', '2025-01-04T09:00:00.000Z');
  const forked = await recordTurns(paths, 'try', 1, { date: '2025-01-04' });
  const gone = makeEntry({ id: 'removed0001', session: 'gone', session_id: '00000000-0000-4000-8000-00000000dead' });
  writeEntries(paths, '2025-01-03', [gone]);
  const recent = await recordTurns(paths, 'work', 1, { date: '2025-01-05' });
  return { paths, work: work.entries, play: play.entries, fork: fork.record, forked: forked.entries, gone, recent: defined(recent.entries[0], 'recent') };
}

const idsOf = (found: Map<string, LogEntry>): string[] => [...found.keys()].sort();

describe('findTurns finds what a search of the whole log finds', () => {
  it.each<[string, (h: Awaited<ReturnType<typeof home>>) => string[], number | undefined]>([
    ['a recent turn, in the newest file', (h) => [h.recent.id], undefined],
    ['an old turn, through its index', (h) => [defined(h.work[0], 'work 1').id], 1],
    ['turns of several sessions at once, a fork\'s own among them', (h) => [...h.work, ...h.play, ...h.forked].map((entry) => entry.id), 1],
    ['a removed session\'s turn, which no index names', (h) => [h.gone.id], 1],
    ['an id no line has, and one that is only replayed', () => ['nosuchturn01', 'turn-0000001'], 1],
    ['nothing asked', () => [], 1],
  ])('%s', async (_name, ids, recentBytes) => {
    const h = await home();
    const asked = ids(h);
    const expected = await everywhere(h.paths, asked);
    const found = await findTurns(h.paths, asked, recentBytes === undefined ? {} : { recentBytes });
    expect(found).toEqual(expected);
    expect(idsOf(found)).toEqual(idsOf(expected));
  });

  it('an index that points elsewhere, is damaged, is a link, or names a turn inside another line: the log is searched', async () => {
    const h = await home();
    const [first, second, third] = h.work;
    const index = join(h.paths.sessions, 'work.idx');
    const lines = readFileSync(index, 'utf8').split('\n').filter((line) => line !== '');
    // The first turn's place now holds the second's line; the third's is cut into the middle of its line.
    const moved = lines.map((line) => JSON.parse(line) as { id: string; offset: number; length: number });
    const at = (id: string | undefined) => defined(moved.find((line) => line.id === id), `index line of ${id ?? ''}`);
    const [a, b, c] = [at(first?.id), at(second?.id), at(third?.id)];
    const stale = [{ ...a, offset: b.offset, length: b.length }, b, { ...c, offset: c.offset + 1, length: c.length - 1 }];
    writeFileSync(index, `${stale.map((line) => JSON.stringify(line)).join('\n')}\nnot json\n`);
    // play's index is a link to work's real one: never followed.
    const real = join(h.paths.sessions, 'real.idx.txt');
    writeFileSync(real, lines.map((line) => `${line}\n`).join(''));
    rmSync(join(h.paths.sessions, 'play.idx'));
    symlinkSync(real, join(h.paths.sessions, 'play.idx'));
    // The fork's index names the first two turns rightly: without it, only the second one's place holds.
    rmSync(join(h.paths.sessions, 'try.idx'));
    const asked = [first, second, third].map((entry) => defined(entry, 'work turn').id);
    expect(idsOf(findIndexedTurns(h.paths, new Set(asked)))).toEqual([defined(second, 'second').id]);
    expect(await findTurns(h.paths, asked, { recentBytes: 1 })).toEqual(await everywhere(h.paths, asked));
  });

  it.each<[string, (paths: DataPaths) => void]>([
    ['a length far past the file\'s end', (paths) => appendFileSync(join(paths.sessions, 'play.idx'), `${JSON.stringify({ id: 'lost0000001', file: '2025-01-03.log', offset: 0, length: 1e12, status: 'ok', type: 'question' })}\n`)],
    ['a folder where the day\'s log was', (paths) => {
      appendFileSync(join(paths.sessions, 'play.idx'), `${JSON.stringify({ id: 'lost0000001', file: '2025-01-09.log', offset: 0, length: 10, status: 'ok', type: 'question' })}\n`);
      mkdirSync(join(paths.logs, '2025-01-09.log'));
    }],
    ['a named pipe where the day\'s log was', (paths) => {
      appendFileSync(join(paths.sessions, 'play.idx'), `${JSON.stringify({ id: 'lost0000001', file: '2025-01-09.log', offset: 0, length: 10, status: 'ok', type: 'question' })}\n`);
      execFileSync('mkfifo', [join(paths.logs, '2025-01-09.log')]);
    }],
    ['a named pipe where an index was', (paths) => execFileSync('mkfifo', [join(paths.sessions, 'aaa.idx')])],
  ])('an index naming %s: nothing found there, nothing thrown, no wait', async (_name, arrange) => {
    const h = await home();
    arrange(h.paths);
    expect(findIndexedTurns(h.paths, new Set(['lost0000001'])).size).toBe(0);
    expect(await findTurns(h.paths, ['lost0000001'], { recentBytes: 1 })).toEqual(new Map());
    // The indexes still find what they rightly name.
    const old = defined(h.work[0], 'work 1').id;
    expect(idsOf(findIndexedTurns(h.paths, new Set([old])))).toEqual([old]);
  });

  it('a turn written inside another line (an argument holding a turn) is not taken for it', async () => {
    const h = await home();
    const inner = makeEntry({ id: 'inner000001' });
    const holder = makeEntry({ id: 'holder00001', tool_calls: [{ id: 'c', name: 'echo', arguments: { ...inner }, outcome: 'success', round: 0, ms: 1, result_chars: 0 }] });
    const file = writeEntries(h.paths, '2025-01-03', [holder]);
    const text = readFileSync(file, 'utf8');
    const innerText = JSON.stringify(inner);
    const offset = Buffer.byteLength(text.slice(0, text.lastIndexOf(innerText)));
    appendFileSync(join(h.paths.sessions, 'play.idx'), `${JSON.stringify({ id: inner.id, file: '2025-01-03.log', offset, length: Buffer.byteLength(innerText), status: 'ok', type: 'question' })}\n`);
    expect(findIndexedTurns(h.paths, new Set([inner.id])).size).toBe(0);
    expect(await findTurns(h.paths, [inner.id], { recentBytes: 1 })).toEqual(new Map());
  });

  it('the index of the session named first is read first, and a fork\'s index finds its parent\'s turns', async () => {
    const h = await home();
    const inherited = [defined(h.work[0], 'work 1').id, defined(h.work[1], 'work 2').id];
    rmSync(join(h.paths.sessions, 'work.idx'));
    const found = findIndexedTurns(h.paths, new Set(inherited), 'try');
    expect(idsOf(found)).toEqual([...inherited].sort());
    expect(found).toEqual(await everywhere(h.paths, inherited));
  });
});
