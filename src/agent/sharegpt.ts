// Trajectories in ShareGPT form (seed 001), rendered from logged turns. Pure. Only successful
// calls appear; the ephemeral system prompt never does; the turn's own system prompt (--system)
// does, before the tool-calling one; a thinking model's reasoning does, in <think>…</think>,
// unless left out.
import type { ToolDefinition } from '../ollama/transport.js';

export interface ShareGptMessage {
  from: 'system' | 'human' | 'gpt' | 'tool';
  value: string;
}

export interface Trajectory {
  id: string;
  session: string;
  model: string;
  timestamp: string;
  conversations: ShareGptMessage[];
}

/** The logged fields a trajectory is made from. */
export interface TrajectoryTurn {
  id: string;
  session: string;
  model: string;
  timestamp: string;
  /** The system prompt the turn was asked with (--system, config "system"), as logged. */
  system?: string | undefined;
  user_prompt: string;
  model_response: string;
  thinking?: string | undefined;
  round_messages?: readonly { round: number; content: string; thinking?: string | undefined }[] | undefined;
  tool_calls?: readonly { id: string; name: string; arguments: unknown; outcome: string; round?: number; result?: string | undefined }[] | undefined;
}

/** The standard tool-calling system prompt, with the tools' definitions inside <tools>…</tools>. */
export function toolCallingPrompt(definitions: readonly ToolDefinition[]): string {
  return [
    'You are a function calling AI model. You are provided with function signatures within <tools></tools> XML tags. ' +
      'You may call one or more functions to assist with the user query. ' +
      "Don't make assumptions about what values to plug into functions. Here are the available tools: " +
      `<tools>${JSON.stringify(definitions)}</tools>`,
    'For each function call return a JSON object with the function name and arguments within <tool_call></tool_call> XML tags as follows:',
    '<tool_call>\n{"name": <function-name>, "arguments": <args-dict>}\n</tool_call>',
  ].join('\n');
}

function resultValue(result: string | undefined): unknown {
  if (result === undefined) return null;
  try {
    return JSON.parse(result);
  } catch {
    return result;
  }
}

/** What goes into a trajectory besides the conversation itself. */
export interface TrajectoryOptions {
  /** A thinking model's reasoning as `<think>…</think>` before each gpt turn's words (default true). */
  thinking?: boolean;
}

/** A gpt turn's value: its reasoning in <think>…</think>, its words, then its calls, each part on its own line when present. */
function gptValue(thinking: string | undefined, words: string, calls: readonly string[], options: TrajectoryOptions): string {
  const reasoning = options.thinking !== false && thinking !== undefined && thinking !== '' ? `<think>${thinking}</think>` : '';
  return [reasoning, words, ...calls].filter((part) => part !== '').join('\n');
}

/**
 * The system message: the turn's own system prompt, as the model was sent it first, then the
 * tool-calling prompt the format calls for (the tools went beside it, in the request's `tools`).
 */
function systemValue(turn: TrajectoryTurn, definitions: readonly ToolDefinition[]): string {
  const own = turn.system?.trim() ?? '';
  return own === '' ? toolCallingPrompt(definitions) : `${turn.system ?? ''}\n\n${toolCallingPrompt(definitions)}`;
}

/** One turn as a trajectory: system, human, then per round gpt (calls) and tool (responses), then the final gpt. */
export function renderTrajectory(turn: TrajectoryTurn, definitions: readonly ToolDefinition[], options: TrajectoryOptions = {}): Trajectory {
  const conversations: ShareGptMessage[] = [
    { from: 'system', value: systemValue(turn, definitions) },
    { from: 'human', value: turn.user_prompt },
  ];
  const rounds = new Map<number, { id: string; name: string; arguments: unknown; result?: string | undefined }[]>();
  for (const call of turn.tool_calls ?? []) {
    if (call.outcome !== 'success') continue;
    const round = call.round ?? 1;
    const list = rounds.get(round) ?? [];
    // Only a true repeat (the same id in the same round) is dropped: a model may send the same id every round.
    if (list.some((earlier) => earlier.id === call.id)) continue;
    list.push(call);
    rounds.set(round, list);
  }
  for (const round of [...rounds.keys()].sort((a, b) => a - b)) {
    const calls = rounds.get(round) ?? [];
    const said = turn.round_messages?.find((message) => message.round === round);
    conversations.push({
      from: 'gpt',
      value: gptValue(
        said?.thinking,
        said?.content ?? '',
        calls.map((call) => `<tool_call>\n${JSON.stringify({ name: call.name, arguments: call.arguments })}\n</tool_call>`),
        options,
      ),
    });
    conversations.push({
      from: 'tool',
      value: calls
        .map((call) => `<tool_response>\n${JSON.stringify({ tool_call_id: call.id, name: call.name, content: resultValue(call.result) })}\n</tool_response>`)
        .join('\n'),
    });
  }
  conversations.push({ from: 'gpt', value: gptValue(turn.thinking, turn.model_response, [], options) });
  return { id: turn.id, session: turn.session, model: turn.model, timestamp: turn.timestamp, conversations };
}
