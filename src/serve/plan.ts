// From a validated request to what the turn needs: pure, so every rule is a row in a table test.
import { wellFormedText } from '../log/entry.js';
import { isBlankPrompt, typedPrompt } from '../text/prompt.js';
import { badRequest } from './errors.js';
import { lastUserText, toOllamaExtras, toOllamaMessages, toolRound } from './openai.js';
import { argoFieldNamed, argoParam, headerNamed, imagesOf, sentInHeader } from './schema.js';
import type { ArgoFields, ChatRequest } from './schema.js';
import type { ReplayReason, ReplaySpec } from '../replay/types.js';
import { reasonConflict } from '../replay/reason.js';
import type { ArgoDefaults, TurnInput } from './types.js';
import { NO_TOOLS, takesAwayOnly } from '../config/tool-list.js';
import { quotedName } from '../output/terminal-text.js';

const BLANK_PROMPT = 'the last user message has no text, and Argo mode takes its text as the prompt (as argo -s NAME "prompt" does); send the question as its text';
const IMAGES_ONLY = 'the last user message has no text, only images or audio, and Argo mode sends the text alone (as argo -s NAME "prompt" does); add the question as a text part, or send the images in plain mode (no argo object, no X-Argo-* header)';

/** Plain-mode turns are logged in this session. */
export const PLAIN_SESSION = 'api';

export interface AnswerPlan {
  turn: Omit<TurnInput, 'turnId' | 'signal'>;
  stream: boolean;
  includeUsage: boolean;
  /** The client asked for log probabilities (`logprobs: true`). */
  logprobs: boolean;
  /** For ids of tool calls the model sent without one. */
  round: number;
}

/** Where a server's default replay was set, as a client is told it (never the server's paths). */
const DEFAULT_REPLAY_FROM: Record<NonNullable<ArgoDefaults['replaySource']>, string> = {
  env: 'ARGO_REPLAY where it runs',
  config: '"defaultReplay" in its config.json',
  flag: 'as it was started',
  default: 'its own default',
};

/**
 * The CLI's --reason rules. Each field is named as it was sent: `"replay": "last:N"` in the body,
 * `X-Argo-Replay: last:N` as a header; a replay the client left out is named as its reason was sent.
 */
function checkReason(argo: ArgoFields & { replay: ReplaySpec; reason: ReplayReason }, replaySent: boolean, defaultSource: ArgoDefaults['replaySource']): void {
  const reasonInHeader = sentInHeader(argo, 'reason');
  const replayInHeader = replaySent ? sentInHeader(argo, 'replay') : reasonInHeader;
  const reason = reasonInHeader ? headerNamed('reason') : '"reason"';
  const replay = (value: string): string => (replayInHeader ? `${headerNamed('replay')}: ${value}` : `"replay": "${value}"`);
  switch (reasonConflict(argo.reason, argo.replay)) {
    case 'no_replay':
      throw badRequest(`${reason} needs ${replay('last:N')} or ${replayInHeader ? 'session' : '"session"'}`, argoParam(argo, 'reason'));
    case 'session_only':
      // A replay the client left out is the server's default: named by where the operator set it.
      throw badRequest(
        replaySent
          ? `${replay('session')} always uses reason "session"; use ${replay('last:N')} with reason "${argo.reason}"`
          : `this server's default replay is "session" (${DEFAULT_REPLAY_FROM[defaultSource ?? 'default']}), which always uses reason "session"; send ${replay('last:N')} with reason "${argo.reason}"`,
        argoParam(argo, 'reason'),
      );
    case null:
      return;
  }
}

/** How much of a refused tool list its 400 quotes: a list may hold 100 names of 200 characters. */
const MAX_QUOTED_LIST = 200;

/**
 * The server-side tools a request names: `none` is none, as `--tools none` is to the CLI. Config's
 * `"tools"` are not applied: a client opts in to tools running on the server, so a list that only
 * takes away (`-shell`) has nothing to take from.
 */
function serverToolNames(argo: ArgoFields, names: string[]): string[] {
  if (names.length === 1 && names[0] === NO_TOOLS) return [];
  if (takesAwayOnly(names)) {
    throw badRequest(
      `${argoParam(argo, 'tools')}: ${quotedName(names.join(','), MAX_QUOTED_LIST)} only takes tools away, and a request starts with none (config's "tools" are not applied on the server); name what to keep too, e.g. "dev,-shell"`,
      argoParam(argo, 'tools'),
    );
  }
  return names;
}

export function planAnswer(request: ChatRequest, defaults: ArgoDefaults, agentMode: boolean): AnswerPlan {
  const { body } = request;
  // Like the CLI without --replay: the configured default replay (ARGO_REPLAY, "defaultReplay").
  const argo = request.argo
    ? { ...request.argo, replay: request.argo.replay ?? defaults.replay, ...(request.argo.tools ? { tools: serverToolNames(request.argo, request.argo.tools) } : {}) }
    : null;
  const serverTools = (argo?.tools?.length ?? 0) > 0;
  if (serverTools && !agentMode) {
    throw badRequest(`this server does not run tools; leave out ${argoFieldNamed(argo, 'tools')}`, argoParam(argo, 'tools'), 'tools_unavailable');
  }
  // A run's rounds, tool calls and the words between them are not one answer's tokens.
  if (serverTools && body.logprobs === true) {
    throw badRequest(`log probabilities are not given for a run of server-side tools (${argoFieldNamed(argo, 'tools')}); leave out "logprobs", or the tools`, 'logprobs');
  }
  // Client tools are run by the client, Argo tools by the server: one loop cannot serve both.
  if (serverTools && body.tools && body.tools.length > 0) {
    throw badRequest(`"tools" (run by the client) and ${argoFieldNamed(argo, 'tools')} (run on the server) cannot be combined; send one of them`, argoParam(argo, 'tools'), 'tools_conflict');
  }
  // The same rules as the CLI's --reason.
  if (argo?.reason !== undefined) checkReason({ ...argo, reason: argo.reason }, request.argo?.replay !== undefined, defaults.replaySource);

  // Half an emoji (JSON's "\ud83d") as the log will keep it, so what is sent and hashed is what is logged.
  // Argo mode's input is what `argo -s NAME "prompt"` would send: the blanks at its ends dropped.
  const last = lastUserText(body.messages);
  const userPrompt = last === null ? null : argo === null ? wellFormedText(last) : typedPrompt(wellFormedText(last));
  if (argo !== null && userPrompt === null) {
    throw badRequest('Argo mode takes the last user message as its input, and there is none in "messages"', 'messages', 'missing_user_message');
  }
  // The CLI's rule: `argo -s NAME "   "` is no prompt, and Argo mode sends what that command would.
  if (argo !== null && userPrompt !== null && isBlankPrompt(userPrompt)) {
    const lastUser = body.messages.findLast((message) => message.role === 'user');
    throw badRequest(imagesOf(lastUser?.content).length > 0 ? IMAGES_ONLY : BLANK_PROMPT, 'messages', 'empty_user_message');
  }
  const extras = toOllamaExtras(body);
  return {
    turn: {
      session: argo ? (argo.session ?? defaults.session) : PLAIN_SESSION,
      mode: argo ? 'argo' : 'plain',
      model: body.model,
      userPrompt: userPrompt ?? '',
      // Argo mode rebuilds the history from the session's log; the client's copy is not sent.
      messages: argo ? [] : toOllamaMessages(body.messages),
      argo,
      extras,
    },
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    logprobs: body.logprobs === true,
    round: toolRound(body.messages),
  };
}
