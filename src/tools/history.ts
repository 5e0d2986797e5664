// The `history` toolset: search_history finds earlier turns in Argo's own logs, read-only, through
// the same engine as `argo logs`.
import { join } from 'node:path';
import { ToolError, numberArg, stringArg } from './types.js';
import type { Tool } from './types.js';
import { clipText } from '../output/cut.js';

const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 20;
const PROMPT_CHARS = 300;
const RESPONSE_CHARS = 600;

export const searchHistoryTool: Tool = {
  name: 'search_history',
  description: "Search Argo's own log of earlier questions and answers for a text (case-insensitive); the newest matches, oldest first.",
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'text to find in earlier prompts or answers' },
      session: { type: 'string', description: 'only this session (by name)' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `how many turns (default ${DEFAULT_LIMIT})` },
    },
    required: ['query'],
    additionalProperties: false,
  },
  sideEffects: false,
  run: async (args, context) => {
    const [{ ScanStats }, { EMPTY_QUERY }, { searchTurns }, { readSession }] = await loadHistorySearch();
    const text = stringArg(args, 'query') ?? '';
    const sessionName = stringArg(args, 'session');
    let sessionIds: ReadonlySet<string> | null = null;
    if (sessionName !== undefined) {
      const record = await readSession(join(context.home, 'sessions'), sessionName).catch(() => null);
      // Asking again cannot make the session exist: not retryable.
      if (record === null) throw new ToolError(`there is no session named "${sessionName}"`, false);
      sessionIds = new Set([record.id]);
    }
    const turns = [];
    const query = { ...EMPTY_QUERY, grep: text, sessionIds };
    for await (const { entry } of searchTurns(join(context.home, 'logs'), query, new ScanStats(), { limit: numberArg(args, 'limit') ?? DEFAULT_LIMIT })) {
      turns.push({ id: entry.id, timestamp: entry.timestamp, session: entry.session, prompt: clipText(entry.user_prompt, PROMPT_CHARS), response: clipText(entry.model_response, RESPONSE_CHARS) });
    }
    return { turns };
  },
};

/** The log engine (and date-fns with it), loaded only when history is searched, not with the toolset. */
export function loadHistorySearch() {
  return Promise.all([import('../log/scan.js'), import('../query/query.js'), import('../query/search.js'), import('../sessions/store.js')]);
}
