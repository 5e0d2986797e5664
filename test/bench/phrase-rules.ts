// Issue 9, item 17: the replay rules (style, classify, reason) on hostile 400 KB prompts. Each prompt
// is built to make a backtracking matcher retry at every word: wildcard phrases opened and never
// closed, near misses of every phrase, apostrophe runs inside one word. Timed in-process, since the
// rules are pure and the cost of interest is the matching, not the start-up. Each figure is the CPU
// time of one `planTurn` (style, classify, reason, prompt) on the prompt with replay `last:5`.
import { planTurn } from '../../src/replay/plan.js';
import { DEFAULT_REPLAY_POLICY, DEFAULT_STYLE_POLICY } from '../../src/replay/policy.js';
import { makePlanInput } from '../support/plan-input.js';
import type { Row } from './report.js';
import { summarize } from './stats.js';
import type { Summary } from './stats.js';

export const ADVERSARIAL_PROMPT_BYTES = 400 * 1024;
export const PHRASE_TARGET_MS = 50;

/** `unit` repeated to exactly `ADVERSARIAL_PROMPT_BYTES` characters (all ASCII, so bytes too). */
function fill(unit: string, tail = ''): string {
  const body = unit.repeat(Math.ceil(ADVERSARIAL_PROMPT_BYTES / unit.length));
  return body.slice(0, ADVERSARIAL_PROMPT_BYTES - tail.length) + tail;
}

const { classify, clarification } = DEFAULT_REPLAY_POLICY;
const everyPhrase = [...classify.meta, ...classify.correction, ...clarification, ...DEFAULT_STYLE_POLICY.verbosity.longPhrases];
/** Every phrase without its last word: each one starts a match that must then fail. */
const nearMisses = everyPhrase.map((phrase) => phrase.split(' ').slice(0, -1).join(' ')).filter((text) => text !== '');

export const ADVERSARIAL_PROMPTS: Readonly<Record<string, string>> = {
  'wildcard opened, never closed ("what does " × 40,960)': fill('what does '),
  'wildcard with long gaps ("what does" + 50 words, repeated)': fill(`what does ${'word '.repeat(50)}`),
  'near miss of every phrase, repeated': fill(`${nearMisses.join(' x ')} x `),
  "apostrophes inside one word (x'''…'''x)": fill("'", 'x').replace(/^'/, 'x'),
  'one 400 KB word': fill('a'),
  'question mark and closers, repeated (?)" …)': fill('?)" ', '.'),
};

/** Ordinary text of the same size, for scale. */
export const REFERENCE_PROMPT = fill('How do I read a file line by line in TypeScript, and why does it hang? ');

/** CPU time (user + system) of one planning: on a busy machine it moves far less than wall time. */
function planOnce(input: string): number {
  const started = process.cpuUsage();
  planTurn(makePlanInput({ input, spec: { kind: 'last', count: 5 } }));
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

export interface PhraseRulesResult {
  promptBytes: number;
  reference: Summary;
  prompts: Record<string, Summary>;
}

export function benchPhraseRules(runs: number, progress: (message: string) => void): { result: PhraseRulesResult; rows: Row[] } {
  const time = (input: string): Summary => {
    planOnce(input); // warm-up: the first call also compiles the patterns
    return summarize(
      Array.from({ length: runs }, () => {
        planOnce('reset'); // the rules keep the last prompt's words: each timed run starts cold
        return planOnce(input);
      }),
    );
  };
  const reference = time(REFERENCE_PROMPT);
  const prompts: Record<string, Summary> = {};
  const section = `Issue 9: replay rules on ${ADVERSARIAL_PROMPT_BYTES / 1024} KB adversarial prompts (in-process)`;
  const rows: Row[] = [];
  for (const [name, input] of Object.entries(ADVERSARIAL_PROMPTS)) {
    progress(`phrase rules: ${name}`);
    const summary = time(input);
    prompts[name] = summary;
    rows.push({
      section,
      measure: `${name}, median CPU`,
      argo: `${summary.median.toFixed(1)} ms`,
      reference: `${reference.median.toFixed(1)} ms`,
      comparison: `p90 ${summary.p90.toFixed(1)} ms`,
      target: `≤ ${PHRASE_TARGET_MS} ms`,
      pass: summary.median <= PHRASE_TARGET_MS,
    });
  }
  return { result: { promptBytes: ADVERSARIAL_PROMPT_BYTES, reference, prompts }, rows };
}
