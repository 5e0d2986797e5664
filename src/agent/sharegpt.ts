// Trajectories in ShareGPT form (seed 001), rendered from logged turns. Pure. Only successful
// calls appear; the ephemeral system prompt never does.
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
  user_prompt: string;
  model_response: string;
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

/** One turn as a trajectory: system, human, then per round gpt (calls) and tool (responses), then the final gpt. */
export function renderTrajectory(turn: TrajectoryTurn, definitions: readonly ToolDefinition[]): Trajectory {
  const conversations: ShareGptMessage[] = [
    { from: 'system', value: toolCallingPrompt(definitions) },
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
    conversations.push({
      from: 'gpt',
      value: calls.map((call) => `<tool_call>\n${JSON.stringify({ name: call.name, arguments: call.arguments })}\n</tool_call>`).join('\n'),
    });
    conversations.push({
      from: 'tool',
      value: calls
        .map((call) => `<tool_response>\n${JSON.stringify({ tool_call_id: call.id, name: call.name, content: resultValue(call.result) })}\n</tool_response>`)
        .join('\n'),
    });
  }
  conversations.push({ from: 'gpt', value: turn.model_response });
  return { id: turn.id, session: turn.session, model: turn.model, timestamp: turn.timestamp, conversations };
}
