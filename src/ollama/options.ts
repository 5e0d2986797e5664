// Pure: Ollama's model options by name and type, and the `-o key=value` parser that checks them.
import { UsageError, shownWord } from '../errors.js';
import { DECIMAL } from '../text/decimal.js';
import { didYouMean } from '../text/similar.js';

export type OptionKind = 'integer' | 'number' | 'boolean' | 'strings';
export type OptionValue = number | boolean | string[];
export type OptionValues = Record<string, OptionValue>;

/**
 * The names and types of Ollama's `Options` (api/types.go: the per-request ones and the runner's).
 * Ollama ignores names it does not know, so a typo here would silently do nothing: that is why
 * names are checked before sending.
 */
export const OLLAMA_OPTIONS: Readonly<Record<string, OptionKind>> = {
  // sampling (per request)
  num_keep: 'integer',
  seed: 'integer',
  num_predict: 'integer',
  top_k: 'integer',
  top_p: 'number',
  min_p: 'number',
  typical_p: 'number',
  repeat_last_n: 'integer',
  temperature: 'number',
  repeat_penalty: 'number',
  presence_penalty: 'number',
  frequency_penalty: 'number',
  stop: 'strings',
  // runner (take effect when the model is loaded)
  num_ctx: 'integer',
  num_batch: 'integer',
  num_gpu: 'integer',
  main_gpu: 'integer',
  use_mmap: 'boolean',
  num_thread: 'integer',
  draft_num_predict: 'integer',
};

/**
 * Options Ollama's API once had and dropped (the ollama npm client's type still lists them): a
 * server logs "invalid option" and ignores them, the very silent no-op the check is for.
 */
const DROPPED_OPTIONS = new Set(['tfs_z', 'mirostat', 'mirostat_tau', 'mirostat_eta', 'penalize_newline', 'numa', 'low_vram', 'f16_kv', 'logits_all', 'vocab_only', 'use_mlock', 'embedding_only']);

/** Request fields that people reach for with -o but that are not model options. */
const NOT_OPTIONS: Readonly<Record<string, string>> = {
  keep_alive: 'use --keep-alive',
  model: 'use --model',
  system: 'use --system or --system-file',
  format: 'it is not a model option',
  think: 'it is not a model option',
};

const KIND_WORDS: Record<OptionKind, string> = {
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  strings: 'text (repeat -o stop=… for several)',
};

/**
 * `-o key=value` assignments, in order, to option values. A later value for the same name wins,
 * except `stop`, which collects every value given.
 */
export function parseOptionAssignments(assignments: readonly string[]): OptionValues {
  const values: OptionValues = {};
  for (const assignment of assignments) {
    const equals = assignment.indexOf('=');
    if (equals <= 0) throw new UsageError(`-o ${JSON.stringify(assignment)}: use key=value, e.g. -o num_predict=200`);
    const name = assignment.slice(0, equals).trim();
    const raw = assignment.slice(equals + 1);
    const kind = Object.hasOwn(OLLAMA_OPTIONS, name) ? OLLAMA_OPTIONS[name] : undefined;
    if (kind === undefined) {
      const instead = Object.hasOwn(NOT_OPTIONS, name) ? NOT_OPTIONS[name] : undefined;
      if (instead !== undefined) throw new UsageError(`-o ${name}: not a model option; ${instead}`);
      if (DROPPED_OPTIONS.has(name)) throw new UsageError(`-o ${name}: Ollama no longer takes this option (it was removed from its API and would be ignored); see docs/cli.md for the list`);
      throw new UsageError(`-o ${shownWord(name)}: unknown Ollama option${didYouMean(name, Object.keys(OLLAMA_OPTIONS))}; see docs/cli.md for the list`);
    }
    const value = convert(raw, kind);
    if (value === null) throw new UsageError(`-o ${shownWord(`${name}=${raw}`)}: ${name} takes ${KIND_WORDS[kind]}`);
    if (name === 'num_ctx' && typeof value === 'number' && value < 1) throw new UsageError(`-o ${shownWord(`num_ctx=${raw}`)}: the context window takes a whole number of 1 or more`);
    const previous = values[name];
    values[name] = Array.isArray(value) && Array.isArray(previous) ? [...previous, ...value] : value;
  }
  return values;
}

function convert(raw: string, kind: OptionKind): OptionValue | null {
  const text = raw.trim();
  switch (kind) {
    case 'integer': {
      const number = Number(text);
      return /^-?\d+$/.test(text) && Number.isSafeInteger(number) ? number : null;
    }
    case 'number': {
      const number = Number(text);
      return DECIMAL.test(text) && Number.isFinite(number) ? number : null;
    }
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : null;
    case 'strings':
      // A stop sequence is kept exactly as written: its spaces are part of it.
      return raw === '' ? null : [raw];
  }
}
