// The last name of each removed session. Its turns in the log carry the name they were asked under,
// which a rename since left behind: without this, `argo logs -s NAME` could not find a session
// renamed then removed by the name it had, and its turns would be shown under an older name.
import { join } from 'node:path';
import { appendPrivate, openDataFile } from '../log/fs.js';
import { isPlainObject } from '../log/entry.js';

/** Not a record (`.json`) nor an index (`.idx`): no session name, earlier ones included, can make it. */
const REMOVED_LIST = '.removed-sessions.jsonl';

export function removedListPath(dir: string): string {
  return join(dir, REMOVED_LIST);
}

/** Notes that the session of `id` was removed under `name`: one line, appended, in a private file. */
export async function recordRemoval(dir: string, removed: { id: string; name: string }, at: string): Promise<void> {
  await appendPrivate(removedListPath(dir), `${JSON.stringify({ session_id: removed.id, name: removed.name, removed_at: at })}\n`);
}

/** The last name of each removed session by id, as noted; a line that cannot be read is passed over. */
export async function removedNames(dir: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const handle = await openDataFile(removedListPath(dir));
  if (handle === null) return names;
  let text: string;
  try {
    text = await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
  for (const line of text.split('\n')) {
    const noted = parseNote(line);
    // The newest note wins: an id is removed once, but a copied home may repeat one.
    if (noted !== null) names.set(noted.session_id, noted.name);
  }
  return names;
}

function parseNote(line: string): { session_id: string; name: string } | null {
  if (line.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (!isPlainObject(value)) return null;
  const { session_id: id, name } = value;
  return typeof id === 'string' && typeof name === 'string' && id !== '' && name !== '' ? { session_id: id, name } : null;
}
