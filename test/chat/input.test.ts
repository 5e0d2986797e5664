import { describe, expect, it } from 'vitest';
import { classifyInput, hidesThinking, isAnswerWord, takeLine } from '../../src/chat/input.js';
import type { LineResult, Pending } from '../../src/chat/input.js';

/** Feeds lines one by one and collects the complete inputs. */
function feed(lines: string[]): { inputs: string[]; pending: Pending } {
  let pending: Pending = null;
  const inputs: string[] = [];
  for (const line of lines) {
    const result: LineResult = takeLine(pending, line);
    pending = result.kind === 'more' ? result.pending : null;
    if (result.kind === 'input') inputs.push(result.text);
  }
  return { inputs, pending };
}

describe('takeLine', () => {
  it.each([
    [['why is the sky blue?'], ['why is the sky blue?']],
    [['  indented stays  '], ['  indented stays  ']],
    [['', '   '], []],
    [['"""', 'line one', '', '  line three', '"""'], ['line one\n\n  line three']],
    [['"""first', 'second"""'], ['first\nsecond']],
    [['"""one line"""'], ['one line']],
    [['"""', '"""'], []],
    [['"""', 'a', '"""', 'b'], ['a', 'b']],
    [['say """ in the middle'], ['say """ in the middle']],
  ])('%j → %j', (lines, inputs) => {
    expect(feed(lines).inputs).toEqual(inputs);
  });

  it.each([
    ['/bye', null, false],
    ['"""/bye"""', null, true],
    ['/model fancy"""', ['"""'], true],
  ])('%j (pending %j) is a block: %j', (line, pending, block) => {
    expect(takeLine(pending, line)).toMatchObject({ kind: 'input', block });
  });

  it('keeps an unfinished block pending', () => {
    expect(feed(['"""', 'a', 'b'])).toEqual({ inputs: [], pending: ['a', 'b'] });
  });
});

describe('classifyInput', () => {
  it.each([
    ['hello', { kind: 'prompt', text: 'hello' }],
    ['/help', { kind: 'command', name: 'help', argument: '', typed: 'help' }],
    ['/session work', { kind: 'command', name: 'session', argument: 'work', typed: 'session' }],
    ['/replay last:3 ', { kind: 'command', name: 'replay', argument: 'last:3', typed: 'replay' }],
    ['/model llama3:8b', { kind: 'command', name: 'model', argument: 'llama3:8b', typed: 'model' }],
    ['/thinking hide', { kind: 'command', name: 'thinking', argument: 'hide', typed: 'thinking' }],
    ['/Thinking Show', { kind: 'command', name: 'thinking', argument: 'Show', typed: 'thinking' }],
    ['/explain why is it blue?', { kind: 'command', name: 'explain', argument: 'why is it blue?', typed: 'explain' }],
    ['/BYE', { kind: 'command', name: 'bye', argument: '', typed: 'bye' }],
    ['/exit', { kind: 'command', name: 'bye', argument: '', typed: 'exit' }],
    ['/quit', { kind: 'command', name: 'bye', argument: '', typed: 'quit' }],
    ['/quit now', { kind: 'command', name: 'bye', argument: 'now', typed: 'quit' }],
    ['/sesion work', { kind: 'unknown-command', name: 'sesion', meant: 'session' }],
    ['/SESION', { kind: 'unknown-command', name: 'sesion', meant: 'session' }],
    ['/etc', { kind: 'unknown-command', name: 'etc', meant: null }],
    ['/usr bin', { kind: 'unknown-command', name: 'usr', meant: null }],
    // A word with something glued to it that no command name holds: a mistyped command, not a message.
    ['/bye.', { kind: 'unknown-command', name: 'bye.', meant: 'bye' }],
    ['/help?', { kind: 'unknown-command', name: 'help?', meant: 'help' }],
    ['/session:work', { kind: 'unknown-command', name: 'session:work', meant: 'session' }],
    ['/session: work', { kind: 'unknown-command', name: 'session:', meant: 'session' }],
    ['/last2', { kind: 'unknown-command', name: 'last2', meant: 'last' }],
    ['/Exit!', { kind: 'unknown-command', name: 'exit!', meant: 'exit' }],
    ['/sesion-work', { kind: 'unknown-command', name: 'sesion-work', meant: 'session' }],
    ['/x-ray what?', { kind: 'prompt', text: '/x-ray what?' }],
    ['/v1 is deprecated, what replaces it?', { kind: 'prompt', text: '/v1 is deprecated, what replaces it?' }],
    ['/README.md says what?', { kind: 'prompt', text: '/README.md says what?' }],
    ['/bye👋', { kind: 'unknown-command', name: 'bye👋', meant: 'bye' }],
    ['/bye\u001b]0;x\u0007', { kind: 'unknown-command', name: 'bye\u001b]0;x\u0007', meant: 'bye' }],
    // A path: a / after the word makes the line a message, whatever follows.
    ['//etc/hosts is what?', { kind: 'prompt', text: '/etc/hosts is what?' }],
    ['/etc/hosts', { kind: 'prompt', text: '/etc/hosts' }],
    ['/etc/hosts is what?', { kind: 'prompt', text: '/etc/hosts is what?' }],
    ['/usr/bin/env python3: what does it run?', { kind: 'prompt', text: '/usr/bin/env python3: what does it run?' }],
    ['/help.txt/x', { kind: 'prompt', text: '/help.txt/x' }],
    ['/etc/', { kind: 'prompt', text: '/etc/' }],
    // No letter-word after the slash, or a word of other letters: as before, a message.
    ['/2 things', { kind: 'prompt', text: '/2 things' }],
    ['/ bye', { kind: 'prompt', text: '/ bye' }],
    ['/', { kind: 'prompt', text: '/' }],
    ['/naïve question', { kind: 'prompt', text: '/naïve question' }],
    [' /bye', { kind: 'prompt', text: ' /bye' }],
    ['a /help b', { kind: 'prompt', text: 'a /help b' }],
  ])('%j → %j', (text, input) => {
    expect(classifyInput(text)).toEqual(input);
  });
});

describe('isAnswerWord: a line that only answers a yes/no question', () => {
  it.each([
    ['y', true],
    ['Y', true],
    ['yes', true],
    [' YES ', true],
    ['n', true],
    ['No', true],
    ['', false],
    ['ye', false],
    ['yes please', false],
    ['nope', false],
    ['y.', false],
    ['/y', false],
  ])('%j → %s', (line, answer) => {
    expect(isAnswerWord(line)).toBe(answer);
  });
});

describe('hidesThinking: the argument of /thinking', () => {
  it.each([
    ['hide', true],
    ['HIDE', true],
    ['show', false],
    ['Show', false],
  ])('%j → hidden %s', (argument, hidden) => {
    expect(hidesThinking(argument)).toBe(hidden);
  });

  it.each(['on', 'off', 'hidden', 'hide now', 'yes'])('%j is refused, naming what to use', (argument) => {
    expect(() => hidesThinking(argument)).toThrow(`/thinking: use show or hide, got "${argument}"`);
  });
});
