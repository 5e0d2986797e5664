// From a validated request to what the turn needs: pure, so every rule is a row in a table test.
import { wellFormedText } from '../log/entry.js';
import { isBlankPrompt } from '../text/prompt.js';
import { badRequest } from './errors.js';
import { lastUserText, toOllamaExtras, toOllamaMessages, toolRound } from './openai.js';
import { imagesOf } from './schema.js';
import type { ChatRequest } from './schema.js';
import type { ArgoDefaults, TurnInput } from './types.js';

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

export function planAnswer(request: ChatRequest, defaults: ArgoDefaults, agentMode: boolean): AnswerPlan {
  const { body } = request;
  // Like the CLI without --replay: the configured default replay (ARGO_REPLAY, "defaultReplay").
  const argo = request.argo ? { ...request.argo, replay: request.argo.replay ?? defaults.replay } : null;
  if (argo?.tools && argo.tools.length > 0 && !agentMode) {
    throw badRequest('this server does not run tools; leave out the "tools" Argo field', 'argo.tools', 'tools_unavailable');
  }
  // A run's rounds, tool calls and the words between them are not one answer's tokens.
  if (argo?.tools && argo.tools.length > 0 && body.logprobs === true) {
    throw badRequest('log probabilities are not given for a run of server-side tools (the "tools" Argo field); leave out "logprobs", or the tools', 'logprobs');
  }
  // Client tools are run by the client, Argo tools by the server: one loop cannot serve both.
  if (argo?.tools && argo.tools.length > 0 && body.tools && body.tools.length > 0) {
    throw badRequest('"tools" (run by the client) and the "tools" Argo field (run on the server) cannot be combined; send one of them', 'argo.tools', 'tools_conflict');
  }
  // The same rules as the CLI's --reason.
  if (argo?.reason !== undefined && argo.replay.kind === 'none') {
    throw badRequest('"reason" needs "replay": "last:N" or "session"', 'argo.reason');
  }
  if (argo?.reason !== undefined && argo.reason !== 'session' && argo.replay.kind === 'session') {
    throw badRequest(`"replay": "session" always uses reason "session"; use "last:N" with reason "${argo.reason}"`, 'argo.reason');
  }
  // Half an emoji (JSON's "\ud83d") as the log will keep it, so what is sent and hashed is what is logged.
  const last = lastUserText(body.messages);
  const userPrompt = last === null ? null : wellFormedText(last);
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
