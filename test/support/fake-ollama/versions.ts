// What an Ollama of a given version can do, read from ollama/ollama's history (api/types.go,
// server/routes.go at each release tag): the stand-in turns off what its `version` lacks and
// answers as that release did. Each feature names the first release that had it.
import type { FakeOllamaOptions } from './types.js';

/** The newest release the stand-in speaks by default. */
export const CURRENT_VERSION = '0.32.15';

export interface VersionProfile {
  /** 0.1.14: `/api/chat` (before: no such route, a plain-text 404). */
  chat: boolean;
  /** 0.1.23: `keep_alive` (before: an unknown field, ignored). */
  keepAlive: boolean;
  /** 0.1.35: the final chunk's `done_reason`. */
  doneReason: boolean;
  /** 0.1.45: `/api/show` → `model_info`. */
  modelInfo: boolean;
  /** OLLAMA_CONTEXT_LENGTH's default: 2048 before 0.6.7 (0.15.5+ picks more on a large GPU; the stand-in has none). */
  defaultNumCtx: number;
  /** 0.10.0: `/api/ps` → each loaded model's `context_length` (the window it was loaded with). */
  psContextLength: boolean;
  /** 0.2.6: chat `tools` and `message.tool_calls` (before: `tools` ignored, the model answers in text). */
  tools: boolean;
  /** 0.4.6: calls parsed from a streamed answer (before: only with `stream: false`; streamed, they are text). */
  streamedToolCalls: boolean;
  /** 0.4.7: `function.index`, left out when 0 until 0.12.6 sends it always. */
  callIndex: 'none' | 'omitted-when-zero' | 'always';
  /** 0.5.0: `format` may be a JSON schema (before: a string; an object fails to bind). */
  schemaFormat: boolean;
  /** 0.6.4: `/api/show` → `capabilities`. */
  capabilities: boolean;
  /** 0.9.0: `think` (a boolean) and `message.thinking`; before, a thinking model reasons inline in <think> tags. */
  think: boolean;
  /** 0.9.6: a tool result's `tool_name` (before: an unknown field, ignored). */
  toolName: boolean;
  /** 0.11.0: `think` levels, for gpt-oss models only until 0.17.7 takes them for every thinking model. */
  thinkLevels: 'none' | 'gpt-oss' | 'all';
  /**
   * 0.11.0: gpt-oss models answer through the harmony parser (harmony/harmonyparser.go): their
   * reasoning always comes as `thinking` (`think: false` cannot turn it off), and a tool call is
   * held until the answer ends, so it arrives in the done:true line.
   */
  harmony: boolean;
  /** 0.12.4: a thinking model thinks when the request says nothing. */
  thinksByDefault: boolean;
  /** 0.12.10: tool call `id`s, and a tool result's `tool_call_id` (before: unknown fields, ignored). */
  callIds: boolean;
  /** 0.14.0: a tool's `properties` and a call's `arguments` bind as ordered maps (before: Go maps, which word a wrong type otherwise). */
  orderedMaps: boolean;
  /** 0.12.11: `logprobs` and `top_logprobs` (before: unknown fields, ignored; no chunk carries any). */
  logprobs: boolean;
  /** 0.22.0: the "max" level. */
  thinkMax: boolean;
  /** Before 0.12: chat's missing model came from the scheduler: `model "x" not found, try pulling it first`. */
  chatNotFoundFromScheduler: boolean;
}

/** `0.4.6` → [0, 4, 6]; anything after the numbers (`-rc1`) is ignored. */
function parts(version: string): [number, number, number] {
  const [, major = '0', minor = '0', patch = '0'] = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version) ?? [];
  return [Number(major), Number(minor), Number(patch)];
}

export function atLeast(version: string, wanted: string): boolean {
  const [a, b] = [parts(version), parts(wanted)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

export function profileOf(version: string): VersionProfile {
  const since = (wanted: string): boolean => atLeast(version, wanted);
  return {
    // A build from source says 0.0.0 and has the route.
    chat: since('0.1.14') || parts(version).every((n) => n === 0),
    keepAlive: since('0.1.23'),
    doneReason: since('0.1.35'),
    modelInfo: since('0.1.45'),
    defaultNumCtx: since('0.6.7') ? 4096 : 2048,
    psContextLength: since('0.10.0'),
    tools: since('0.2.6'),
    streamedToolCalls: since('0.4.6'),
    callIndex: since('0.12.6') ? 'always' : since('0.4.7') ? 'omitted-when-zero' : 'none',
    schemaFormat: since('0.5.0'),
    capabilities: since('0.6.4'),
    think: since('0.9.0'),
    toolName: since('0.9.6'),
    thinkLevels: since('0.17.7') ? 'all' : since('0.11.0') ? 'gpt-oss' : 'none',
    harmony: since('0.11.0'),
    thinksByDefault: since('0.12.4'),
    callIds: since('0.12.10'),
    logprobs: since('0.12.11'),
    orderedMaps: since('0.14.0'),
    thinkMax: since('0.22.0'),
    chatNotFoundFromScheduler: !since('0.12.0'),
  };
}

export const versionOf = (options: FakeOllamaOptions): string => options.version ?? CURRENT_VERSION;

export const profileOfOptions = (options: FakeOllamaOptions): VersionProfile => profileOf(versionOf(options));
