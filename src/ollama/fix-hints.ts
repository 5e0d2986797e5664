// How an error message names the setting that fixes it. The CLI's user changes flags, a chat's
// its slash commands; a server's client changes its request, and the server's operator its environment.
import { fileURLToPath } from 'node:url';
import { shellWord } from '../text/shell-word.js';
import type { RefusedFeature } from './versions.js';

export interface FixHints {
  /** The model choice: `--model NAME`, or a request's "model". */
  model: (name?: string) => string;
  /** Where Ollama's address is set. */
  host: string;
  /** What to try when a model lacks the endpoint in use; null where the user cannot choose it. */
  api: ((other: 'chat' | 'generate') => string) | null;
  /** How to ask without a feature an older Ollama lacks (the line ends ", or upgrade Ollama"). */
  tooOld: Record<RefusedFeature, string>;
  /** How to ask a model that cannot think without asking it to. */
  noThinking: string;
  /** How to ask with a context window of `size` tokens, for a prompt longer than the window. */
  numCtx: (size: number) => string;
  /** How to replay less, for a prompt made long by the turns replayed. */
  replayLess: string;
  /** How to send fewer tool definitions, for a prompt made long by them. */
  fewerTools: string;
  /** The config file a setting with no flag or field of its own is raised in (timeouts.idleMs, toolBudgets). */
  configFile: string;
}

export const CLI_HINTS: FixHints = {
  model: (name) => (name === undefined ? '--model' : `--model ${name}`),
  host: '--host / OLLAMA_HOST',
  // An embedding-only model supports neither: the hint must not send the user back and forth.
  api: (other) => `try --api ${other}, or another model if this one does neither (an embedding model)`,
  tooOld: {
    tools: 'ask without --tools (and "tools" in config.json)',
    schemaFormat: 'ask without a format',
    think: 'leave out --think (and "think" in config.json)',
    thinkLevels: 'use --think on',
    thinkLevelsAnyModel: 'use --think on',
    // The CLI never asks for them; the record needs a line all the same.
    logprobs: 'ask without log probabilities',
    thinkMax: 'use --think high',
  },
  noThinking: 'ask with --think off (or remove "think" from config.json)',
  numCtx: (size) => `raise --num-ctx (e.g. --num-ctx ${size})`,
  replayLess: 'lower --budget',
  fewerTools: 'name fewer tools in --tools',
  configFile: 'config.json',
};

/**
 * Inside `argo chat`: the model is what the user can change there and then, with /model (whether
 * the chat started with --model or not); the rest is set as the chat starts, and the hint says so:
 * a flag typed in the chat would be sent to the model as a message.
 */
export const CHAT_HINTS: FixHints = {
  model: (name) => (name === undefined ? '/model' : `/model ${name}`),
  host: '--host / OLLAMA_HOST (read as argo chat starts)',
  api: (other) => `start argo chat again with --api ${other}, or choose another model with /model if this one does neither (an embedding model)`,
  tooOld: {
    tools: 'start argo chat again without --tools (and "tools" in config.json)',
    schemaFormat: CLI_HINTS.tooOld.schemaFormat,
    think: 'start argo chat again without --think (and "think" in config.json)',
    thinkLevels: 'start argo chat again with --think on',
    thinkLevelsAnyModel: 'start argo chat again with --think on',
    logprobs: CLI_HINTS.tooOld.logprobs,
    thinkMax: 'start argo chat again with --think high',
  },
  noThinking: 'start argo chat again with --think off (or remove "think" from config.json)',
  numCtx: (size) => `start argo chat again with --num-ctx ${size}`,
  replayLess: 'replay less (/replay last:1 or /replay none)',
  // Read after numCtx's "start argo chat again with …".
  fewerTools: 'fewer tools in --tools',
  configFile: 'config.json',
};

export const SERVER_HINTS: FixHints = {
  model: (name) => (name === undefined ? 'the request\'s "model"' : `"model": "${name}"`),
  host: 'argo serve\'s OLLAMA_HOST (or "host" in its config.json)',
  api: null,
  tooOld: {
    tools: 'send no "tools"',
    schemaFormat: 'send "response_format": {"type": "json_object"}',
    think: 'leave out "reasoning_effort" (and "think" in argo serve\'s config.json)',
    thinkLevels: 'leave out "reasoning_effort"',
    thinkLevelsAnyModel: 'leave out "reasoning_effort"',
    logprobs: 'leave out "logprobs" and "top_logprobs"',
    thinkMax: 'send "reasoning_effort": "high"',
  },
  noThinking: 'leave out "reasoning_effort" (and "think" in argo serve\'s config.json)',
  numCtx: (size) => `raise "options": {"num_ctx": …} in argo serve's config.json (e.g. to ${size})`,
  replayLess: 'replay less (a lower "budget" in argo serve\'s config.json)',
  fewerTools: 'send fewer "tools"',
  configFile: "argo serve's config.json",
};

/**
 * The Modelfile installed with Argo (docs/ is in the package), by its full path: run from any
 * folder, "docs/Modelfile" names nothing. From src/ollama and from the built dist/cli alike, the
 * package's root is two folders up.
 */
export const MODELFILE = fileURLToPath(new URL('../../docs/Modelfile', import.meta.url));

/** How to get a missing model: "argo" is Argo's own, made from docs/Modelfile; any other is pulled. */
export function howToGetModel(model: string): string {
  return /^argo(:latest)?$/i.test(model) ? `create it with "ollama create argo -f ${shellWord(MODELFILE)}"` : `pull it with "ollama pull ${model}"`;
}

/** The other way out of a missing model: an installed one that can answer, when there is one. */
export function orInstalledModel(hints: FixHints, suggested: string | undefined): string {
  return suggested !== undefined ? `, or use an installed one (${hints.model(suggested)})` : `, or choose another with ${hints.model()}`;
}

/** The most installed models a line names; `ollama list` shows them all. */
const NAMED_MODELS = 20;

/** Installed models as a line names them: the first few, then how many more. */
export function installedNames(installed: readonly string[]): string {
  const more = installed.length - NAMED_MODELS;
  return `${installed.slice(0, NAMED_MODELS).join(', ')}${more > 0 ? `, and ${more} more (ollama list)` : ''}`;
}

/**
 * The one line for a model Ollama at `host` does not have, for a turn and for argo serve alike:
 * what is installed (null: unknown), how to get the model, or which installed one to use.
 */
export function missingModelLine(model: string, host: string, installed: readonly string[] | null, hints: FixHints, suggested: string | undefined): string {
  const list = installed === null ? '' : installed.length === 0 ? '; no models are installed' : `; installed: ${installedNames(installed)}`;
  const get = howToGetModel(model);
  return `model "${model}" not found on Ollama at ${host}${list}. ${get[0]?.toUpperCase() ?? ''}${get.slice(1)}${orInstalledModel(hints, suggested)}`;
}
