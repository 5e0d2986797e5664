// The `history` toolset: search_history finds earlier turns in Argo's own logs, read-only, through
// the same engine as `argo logs`.
import { join } from 'node:path';
import { quoting } from './foreign-line.js';
import { ToolError, numberArg, stringArg } from './types.js';
import type { Tool } from './types.js';
import { clipText } from '../output/cut.js';
import { byCodeUnits } from '../text/order.js';
import { similarNames } from '../text/similar.js';

const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 20;
const PROMPT_CHARS = 300;
const RESPONSE_CHARS = 600;
const KNOWN_NAMES_SHOWN = 5;

export const searchHistoryTool: Tool = {
  name: 'search_history',
  description: "Search Argo's own log of earlier questions and answers for a text (case-insensitive); the newest matches, oldest first.",
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'text to find in earlier prompts or answers' },
      // Models send null for a filter they do not want: it means none, as "" does.
      session: { type: ['string', 'null'], description: 'only this session (by its name now, as results give it); null or "" for all' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `how many turns (default ${DEFAULT_LIMIT})` },
    },
    required: ['query'],
    additionalProperties: false,
  },
  sideEffects: false,
  run: async (args, context) => {
    const [{ ScanStats }, { EMPTY_QUERY }, { searchTurns }, { SessionLookup }] = await loadHistorySearch();
    const text = stringArg(args, 'query') ?? '';
    // An empty name (or null) filters nothing, as search_files takes an empty glob.
    const named = stringArg(args, 'session')?.trim();
    const sessionName = named === '' ? undefined : named;
    const sessions = new SessionLookup(join(context.home, 'sessions'));
    let sessionIds: ReadonlySet<string> | null = null;
    if (sessionName !== undefined) {
      const record = await sessions.byName(sessionName);
      // The model may name another: retryable.
      if (record === null) throw new ToolError(quoting`there is no session named "${sessionName}"; ${await knownNames(sessionName, sessions)}`);
      sessionIds = new Set([record.id]);
    }
    const turns = [];
    const query = { ...EMPTY_QUERY, grep: text, sessionIds };
    const skipped = new ScanStats();
    try {
      for await (const { entry } of searchTurns(join(context.home, 'logs'), query, skipped, { limit: numberArg(args, 'limit') ?? DEFAULT_LIMIT, signal: context.signal })) {
        // The session's name now, which the `session` argument takes: the logged one may have been renamed, or be another's.
        const session = await sessions.namedNow(entry.session_id, entry.session);
        turns.push({
          id: entry.id,
          timestamp: entry.timestamp,
          ...session,
          prompt: clipText(entry.user_prompt, PROMPT_CHARS),
          response: clipText(entry.model_response, RESPONSE_CHARS),
        });
      }
    } catch (error) {
      // Ctrl-C, a STOP, the call's timeout: the search was cut, as run_command's command is.
      if (context.signal.aborted) throw new ToolError('the search was interrupted', false);
      throw error;
    }
    // What the search could not read may hold a turn it would have found: the model is told, as the user is.
    const note = skippedNote(skipped);
    return { turns, ...(note !== null ? { note } : {}) };
  },
};

/** What a search skipped, in words for the model; null when it read everything. */
export function skippedNote(stats: { unreadable: number; missedDays: readonly string[] }): string | null {
  const parts = [
    ...(stats.unreadable === 0 ? [] : [`${stats.unreadable} unreadable log line${stats.unreadable === 1 ? '' : 's'}`]),
    ...(stats.missedDays.length === 0 ? [] : [`${stats.missedDays.length} day${stats.missedDays.length === 1 ? "'s log file" : "s' log files"} out of reach`]),
  ];
  return parts.length === 0 ? null : `skipped ${parts.join(' and ')}: a turn there was not searched`;
}

/** Sessions the model could name instead of `wrong`: the likeliest first, a few at most. */
async function knownNames(wrong: string, sessions: { all: () => Promise<readonly { name: string }[]> }): Promise<string> {
  const names = (await sessions.all()).map((record) => record.name).sort(byCodeUnits);
  if (names.length === 0) return 'there are no sessions yet';
  const likely = similarNames(wrong, names);
  const shown = [...new Set([...likely, ...names])].slice(0, KNOWN_NAMES_SHOWN);
  const more = names.length - shown.length;
  return `sessions: ${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** The log engine (and date-fns with it), loaded only when history is searched, not with the toolset. */
export function loadHistorySearch() {
  return Promise.all([import('../log/scan.js'), import('../query/query.js'), import('../query/search.js'), import('../sessions/store.js')]);
}
