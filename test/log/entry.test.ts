import { describe, expect, it } from 'vitest';
import { entryProblem, parseEntry, serializeEntry } from '../../src/log/entry.js';
import type { LogEntry } from '../../src/log/entry.js';
import { makeEntry } from '../query/helpers.js';

const entry: LogEntry = makeEntry({ id: 'abc123def456', user_prompt: 'Why?', model_response: 'Because.' });

describe('the log line codec', () => {
  it('round-trips a turn, keeping fields this version does not know', () => {
    const line = serializeEntry({ ...entry, iterations: 3 });
    expect(parseEntry(line)).toEqual({ ...entry, iterations: 3 });
  });

  it.each([
    ['user_prompt', 5, 'field "user_prompt": a number where expected string'],
    ['model_response', null, 'field "model_response": null where expected string'],
    ['entry_type', 'riddle', 'field "entry_type": a string where'],
    ['replay', { enabled: 'yes', count: null, session: false }, 'field "replay.enabled": a string where expected boolean'],
    ['timings', undefined, 'field "timings": missing'],
    // None of the field's choices takes it: zod says only "Invalid input".
    ['keep_alive', null, 'field "keep_alive": null, which the field does not take'],
    // Found by test/log/entry.property.test.ts: a key with a newline made the problem two lines.
    ['options', { 'a\nb': 'x' }, 'field "options.a\\nb": a string, which the field does not take'],
    ['options', JSON.parse('{"__proto__":"x"}') as unknown, 'field "options.__proto__": a string, which the field does not take'],
  ])('rejects a wrong %s and names the field', async (field, value, problem) => {
    const bad = Object.fromEntries(Object.entries({ ...entry, [field]: value }).filter(([, v]) => v !== undefined));
    expect(parseEntry(JSON.stringify(bad))).toBeNull();
    expect(await entryProblem(bad)).toContain(problem);
  });

  it.each([
    ['[1,2]', 'valid JSON but not an object'],
    ['"text"', 'valid JSON but not an object'],
  ])('%s is not a turn', async (text, problem) => {
    expect(await entryProblem(JSON.parse(text))).toBe(problem);
  });

  it.each([
    ['a lone high surrogate', 'cut \ud83d', 'cut \ufffd'],
    ['a lone low surrogate', '\ude00 start', '\ufffd start'],
    ['a whole pair stays', 'smile \ud83d\ude00', 'smile \ud83d\ude00'],
  ])('writes well-formed UTF-8 JSON: %s', (_name, text, written) => {
    const line = serializeEntry({ ...entry, model_response: text });
    expect(line).not.toMatch(/\\ud[89a-f]/i);
    expect(parseEntry(line)?.model_response).toBe(written);
    expect(Buffer.from(line, 'utf8').toString('utf8')).toBe(line);
  });
});
