// The `history` toolset: search_history finds earlier turns in Argo's own logs, read-only, through
// the same engine as `argo logs`.
import { join } from 'node:path';
import { quoting } from './foreign-line.js';
import { ToolError, numberArg, stringArg } from './types.js';
import type { Tool } from './types.js';
import { clipText } from '../output/cut.js';

const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 20;
const PROMPT_CHARS = 300;
const RESPONSE_CHARS = 600;
const REMOVED_NOTE = 'the session this turn was in has been removed';

export const searchHistoryTool: Tool = {
  name: 'search_history',
  description: "Search Argo's own log of earlier questions and answers for a text (case-insensitive); the newest matches, oldest first.",
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'text to find in earlier prompts or answers' },
      session: { type: 'string', description: 'only this session (by its name now, as results give it)' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `how many turns (default ${DEFAULT_LIMIT})` },
    },
    required: ['query'],
    additionalProperties: false,
  },
  sideEffects: false,
  run: async (args, context) => {
    const [{ ScanStats }, { EMPTY_QUERY }, { searchTurns }, { SessionLookup }] = await loadHistorySearch();
    const text = stringArg(args, 'query') ?? '';
    const sessionName = stringArg(args, 'session');
    const sessions = new SessionLookup(join(context.home, 'sessions'));
    let sessionIds: ReadonlySet<string> | null = null;
    if (sessionName !== undefined) {
      const record = await sessions.byName(sessionName);
      // Asking again cannot make the session exist: not retryable.
      if (record === null) throw new ToolError(quoting`there is no session named "${sessionName}"`, false);
      sessionIds = new Set([record.id]);
    }
    const turns = [];
    const query = { ...EMPTY_QUERY, grep: text, sessionIds };
    for await (const { entry } of searchTurns(join(context.home, 'logs'), query, new ScanStats(), { limit: numberArg(args, 'limit') ?? DEFAULT_LIMIT })) {
      // The session's name now, which the `session` argument takes: the logged one may have been renamed, or be another's.
      await sessions.learn(entry.session_id, entry.session);
      const session = sessions.nameOf(entry.session_id);
      turns.push({
        id: entry.id,
        timestamp: entry.timestamp,
        ...(session !== undefined ? { session } : { session: null, session_note: REMOVED_NOTE }),
        prompt: clipText(entry.user_prompt, PROMPT_CHARS),
        response: clipText(entry.model_response, RESPONSE_CHARS),
      });
    }
    return { turns };
  },
};

/** The log engine (and date-fns with it), loaded only when history is searched, not with the toolset. */
export function loadHistorySearch() {
  return Promise.all([import('../log/scan.js'), import('../query/query.js'), import('../query/search.js'), import('../sessions/store.js')]);
}
