import { renderTurn } from './budget.js';
import type { Endpoint } from './types.js';

/** Ollama's model options: the named ones Argo sets itself, and any other checked `-o` option. */
export interface ModelOptions {
  temperature?: number;
  seed?: number;
  num_ctx?: number;
  [name: string]: number | boolean | string[] | undefined;
}

export interface RequestSettings {
  endpoint: Endpoint;
  model: string;
  stream: boolean;
  options: ModelOptions;
  keepAlive?: string | number;
  /** Whether (or how hard) a thinking model reasons first; absent leaves it to Ollama (on since 0.12.4). */
  think?: Think;
}

/** Ollama's `think`: on or off, or a level for the models that take one. */
export type Think = boolean | ThinkLevel;
export const THINK_LEVELS = ['low', 'medium', 'high', 'max'] as const;
export type ThinkLevel = (typeof THINK_LEVELS)[number];

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Log probabilities of the answer's tokens: asked by a caller's body fields (argo serve's client), never by the replay core. */
interface LogprobFields {
  logprobs?: boolean;
  top_logprobs?: number;
}

export interface ChatBody extends LogprobFields {
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  options?: ModelOptions;
  keep_alive?: string | number;
  think?: Think;
}

export interface GenerateBody extends LogprobFields {
  model: string;
  prompt: string;
  system?: string;
  stream: boolean;
  options?: ModelOptions;
  keep_alive?: string | number;
  think?: Think;
}

export type OllamaRequest =
  | { endpoint: '/api/chat'; body: ChatBody }
  | { endpoint: '/api/generate'; body: GenerateBody };

export interface PromptParts {
  /** Mode, persona, verbosity and confidence instructions, in that order. */
  instructions: string[];
  replay: readonly { prompt: string; response: string }[];
  input: string;
}

/** The exact request body; key order is fixed so equal inputs serialise to equal bytes. */
export function buildRequest(parts: PromptParts, settings: RequestSettings): OllamaRequest {
  const system = parts.instructions.join('\n');
  const tail = {
    stream: settings.stream,
    ...(hasOptions(settings.options) ? { options: orderedOptions(settings.options) } : {}),
    ...(settings.keepAlive !== undefined ? { keep_alive: settings.keepAlive } : {}),
    ...(settings.think !== undefined ? { think: settings.think } : {}),
  };
  if (settings.endpoint === 'chat') {
    const messages: ChatMessage[] = [];
    if (system !== '') messages.push({ role: 'system', content: system });
    for (const turn of parts.replay) {
      messages.push({ role: 'user', content: turn.prompt }, { role: 'assistant', content: turn.response });
    }
    messages.push({ role: 'user', content: parts.input });
    return { endpoint: '/api/chat', body: { model: settings.model, messages, ...tail } };
  }
  return {
    endpoint: '/api/generate',
    body: {
      model: settings.model,
      prompt: generatePrompt(parts),
      ...(system !== '' ? { system } : {}),
      ...tail,
    },
  };
}

/** Replayed turns in the budget's own rendering, then the new input in the same shape. */
function generatePrompt(parts: PromptParts): string {
  if (parts.replay.length === 0) return parts.input;
  return parts.replay.map((turn) => renderTurn(turn.prompt, turn.response)).join('') + `User: ${parts.input}\nAssistant:`;
}

function hasOptions(options: ModelOptions): boolean {
  return Object.values(options).some((value) => value !== undefined);
}

const FIRST_OPTIONS = ['temperature', 'seed', 'num_ctx'];

/** temperature, seed, num_ctx, then the other options by name: equal options always give equal bytes. */
function orderedOptions(options: ModelOptions): ModelOptions {
  const rest = Object.keys(options)
    .filter((name) => !FIRST_OPTIONS.includes(name))
    .sort();
  const ordered: ModelOptions = {};
  for (const name of [...FIRST_OPTIONS, ...rest]) {
    const value = options[name];
    if (value !== undefined) ordered[name] = value;
  }
  return ordered;
}
