import { describe, expect, it } from 'vitest';
import { thrown } from '../support/thrown.js';
import { DEFAULT_STYLE_POLICY, PolicyError } from '../../src/replay/policy.js';
import { resolveVerbosity, styleInstructions } from '../../src/replay/style.js';
import type { ResolvedVerbosity } from '../../src/replay/style.js';
import type { Verbosity } from '../../src/replay/types.js';

const rules = DEFAULT_STYLE_POLICY.verbosity;

describe('resolveVerbosity', () => {
  it.each<[Verbosity, string, ResolvedVerbosity]>([
    ['short', 'Explain everything in detail, step by step', 'short'], // an explicit setting wins
    ['long', 'hi', 'long'],
    ['auto', 'hi', 'short'],
    ['auto', '', 'short'],
    ['auto', 'Explain monads', 'long'],
    ['auto', 'Show it in detail please', 'long'],
    ['auto', 'step by step', 'long'],
    ['auto', 'Walk me through it', 'long'],
    ['auto', 'Why?', 'long'],
    ['auto', 'Compare A and B', 'long'],
    ['auto', 'Pros and cons of Rust', 'long'],
    ['auto', 'explained already', 'short'], // whole words: "explained" is not "explain"
    ['auto', 'a detailed list', 'short'], // "detailed" is not "in detail"
    ['auto', 'x'.repeat(279), 'short'],
    ['auto', 'x'.repeat(280), 'long'], // longInputChars: 280
    ['auto', '😀'.repeat(279), 'short'], // counted in code points, like the budget
    ['auto', '😀'.repeat(280), 'long'],
    ['auto', 'line one\nline two', 'long'], // several lines
    ['auto', 'hi\n', 'short'], // a trailing newline is not a second line
  ])('%s with %j → %s', (setting, input, expected) => {
    expect(resolveVerbosity(setting, input, rules)).toBe(expected);
  });

  it('follows configured rules', () => {
    const custom = { ...rules, longPhrases: ['tl dr'], longInputChars: 10 };
    expect([
      resolveVerbosity('auto', 'Explain monads', custom),
      resolveVerbosity('auto', 'no tl;dr', custom),
      resolveVerbosity('auto', '0123456789', custom),
    ]).toEqual(['long', 'long', 'long']);
    expect(resolveVerbosity('auto', 'hello', custom)).toBe('short');
  });
});

describe('styleInstructions: mode, persona, verbosity in that order', () => {
  const { modes, personas, verbosity } = DEFAULT_STYLE_POLICY;
  it.each<[string | null, string, ResolvedVerbosity, string[]]>([
    [null, 'neutral', 'short', [personas.neutral ?? '', verbosity.short]],
    [null, 'teacher', 'long', [personas.teacher ?? '', verbosity.long]],
    ['code', 'neutral', 'short', [modes.code ?? '', personas.neutral ?? '', verbosity.short]],
    ['shell', 'critic', 'long', [modes.shell ?? '', personas.critic ?? '', verbosity.long]],
  ])('mode %j, persona %j, verbosity %j', (mode, persona, v, expected) => {
    expect(styleInstructions(DEFAULT_STYLE_POLICY, { mode, persona, verbosity: v })).toEqual(expected);
  });

  it('uses the exact default texts', () => {
    expect(styleInstructions(DEFAULT_STYLE_POLICY, { mode: 'code', persona: 'neutral', verbosity: 'short' })).toEqual([
      'You are a programming assistant. Prefer working code with brief explanations.',
      'Use a neutral, professional tone.',
      'Keep the answer short: a few sentences at most.',
    ]);
  });

  it('drops an instruction configured as empty', () => {
    const style = { ...DEFAULT_STYLE_POLICY, personas: { quiet: '  ' } };
    expect(styleInstructions(style, { mode: null, persona: 'quiet', verbosity: 'long' })).toEqual([verbosity.long]);
  });

  it.each<[string, string | null, string, RegExp]>([
    ['unknown persona', null, 'pirate', /unknown persona "pirate" \(known: critic, expert, friendly, neutral, teacher\)/],
    ['unknown mode', 'poetry', 'neutral', /unknown mode "poetry" \(known: code, review, shell, writing\)/],
    ['inherited property is not a persona', null, 'constructor', /unknown persona "constructor"/],
    ['inherited property is not a mode', 'toString', 'neutral', /unknown mode "toString"/],
    // Quoted as JSON: a name with a line break keeps the message one line.
    ['a name with a line break', null, 'a\nb', /^persona: unknown persona "a\\nb" \(known: [^\n]*\)/],
    // A client's name of any length: its first 64 characters are quoted.
    ['a name of 5,000 characters', null, 'x'.repeat(5000), /^persona: unknown persona "x{64}…" \(known: /],
  ])('%s → PolicyError naming it', (_name, mode, persona, message) => {
    const error = thrown(() => styleInstructions(DEFAULT_STYLE_POLICY, { mode, persona, verbosity: 'short' }));
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).message).toMatch(message);
  });
});
