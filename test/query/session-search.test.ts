// Which sessions a text finds: by title, by a prompt of their own, by a prompt a fork inherited —
// the same answer as reading every session's turns, from one pass over the log.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grepMatcher } from '../../src/query/query.js';
import { sessionsWithText } from '../../src/query/session-search.js';
import { forkSession } from '../../src/sessions/manage.js';
import { indexPath, listSessions, saveSession } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { loadSessionEntries } from '../../src/sessions/turns.js';
import { recordTurns, tempData } from './helpers.js';
import type { Home } from './helpers.js';

let data: Home;
let records: SessionRecord[];

const prompts = ['tell me about otters', 'and seals?', 'Sea LIONS too', 'café au lait', 'ÉCOLE élève'];

beforeAll(async () => {
  data = tempData();
  const { session: games } = await recordTurns(data.paths, 'games', 1, { shape: () => ({ user_prompt: 'play chess', model_response: 'e4, then otters' }) });
  await saveSession(data.paths.sessions, { ...games, title: 'Board Games' });
  const { session: animals, entries } = await recordTurns(data.paths, 'animals', prompts.length, { shape: (i) => ({ user_prompt: prompts[i] ?? '' }) });
  // whales forks animals after its first turn (otters), then asks of its own.
  await forkSession(data.paths, animals, entries[0]?.id, 'whales', '2025-01-03T10:00:00.000Z');
  const { session: whales } = await recordTurns(data.paths, 'whales', 1, { date: '2025-01-03', shape: () => ({ user_prompt: 'how deep do whales dive?' }) });
  // krill forks whales at its own turn; so does pods, whose index is then lost (read from the log).
  await forkSession(data.paths, whales, undefined, 'krill', '2025-01-04T10:00:00.000Z');
  await forkSession(data.paths, whales, undefined, 'pods', '2025-01-04T10:00:00.000Z');
  rmSync(indexPath(data.paths.sessions, 'pods'));
  records = (await listSessions(data.paths.sessions)).sort((a, b) => (a.name < b.name ? -1 : 1));
});
afterAll(() => rmSync(data.home, { recursive: true, force: true }));

/** The rule as it was: every session's turns read, the title or a prompt matching. */
async function byReadingEverySession(text: string): Promise<string[]> {
  const grep = grepMatcher(text);
  const found: string[] = [];
  for (const record of records) {
    if (grep?.test(record.title) || (await loadSessionEntries(data.paths, record)).some((entry) => grep?.test(entry.user_prompt))) found.push(record.name);
  }
  return found;
}

describe('sessionsWithText', () => {
  it.each<[string, string, string[]]>([
    ['a title, any case', 'board', ['games']],
    ['an own prompt', 'SEALS', ['animals']],
    ['a prompt every fork inherited', 'otters', ['animals', 'krill', 'pods', 'whales']],
    ['a prompt after the fork point is not inherited', 'lions', ['animals']],
    ['a fork’s own prompt, inherited by its forks (pods without an index: read from the log)', 'dive', ['krill', 'pods', 'whales']],
    ['a response is not a prompt', 'e4, then', []],
    ['non-ASCII, any case', 'CAFÉ', ['animals']],
    ['non-ASCII capitals', 'école ÉLÈVE', ['animals']],
    ['nothing', 'nothing-like-this', []],
  ])('%s: %j → %j', async (_name, text, expected) => {
    const found = (await sessionsWithText(data.paths, records, text)).map((record) => record.name);
    expect(found).toEqual(expected);
    expect(found).toEqual(await byReadingEverySession(text));
  });
});
