// The exact chat request of an agent run: the plan's messages with the system prompt extended
// (ephemeral guidance, then the memo, read fresh for every request), the messages the loop added,
// and the tools array. Key order is fixed, so equal inputs give byte-identical requests.
import type { AgentChatBody, AgentChatMessage, ToolDefinition } from '../ollama/transport.js';
import type { ChatBody } from '../replay/prompt.js';
import type { Memo } from '../tools/memo.js';
import { memoPrompt } from '../tools/memo.js';
import type { Tool } from '../tools/types.js';

export function toolDefinitions(tools: readonly Tool[]): ToolDefinition[] {
  return tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }));
}

export interface AgentRequestParts {
  /** The turn's planned request: system (mode, persona…), replayed turns, the user's input. */
  base: ChatBody;
  tools: readonly Tool[];
  ephemeralSystem: string | null;
  memo: Memo;
  /** What the loop appended: assistant messages with tool calls and tool results. */
  added: readonly AgentChatMessage[];
}

/** One request of an agent run. */
export interface AgentRequest {
  endpoint: '/api/chat';
  body: AgentChatBody;
}

export function buildAgentRequest(parts: AgentRequestParts): AgentRequest {
  const [first, ...rest] = parts.base.messages;
  const planned = first?.role === 'system' ? first.content : '';
  const conversation = first?.role === 'system' ? rest : parts.base.messages;
  const system = [planned, parts.ephemeralSystem ?? '', memoPrompt(parts.memo)].filter((part) => part !== '').join('\n\n');
  const messages: AgentChatMessage[] = [...(system !== '' ? [{ role: 'system' as const, content: system }] : []), ...conversation, ...parts.added];
  const body: AgentChatBody = {
    model: parts.base.model,
    messages,
    tools: toolDefinitions(parts.tools),
    stream: parts.base.stream,
    ...(parts.base.options !== undefined ? { options: parts.base.options } : {}),
    ...(parts.base.keep_alive !== undefined ? { keep_alive: parts.base.keep_alive } : {}),
    ...(parts.base.think !== undefined ? { think: parts.base.think } : {}),
  };
  return { endpoint: '/api/chat', body };
}
