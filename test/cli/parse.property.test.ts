// The parsers of what users type (flag values, -o options, tool lists, times, hosts), for generated
// text: each returns a value or throws the project's own error (or commander's, for a flag) with one
// line naming what was wrong, never a TypeError or a stack; and each takes what its docs say it takes.
import { InvalidArgumentError } from 'commander';
import { addDays, endOfDay, startOfDay, sub } from 'date-fns';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCount } from '../../src/cli/common.js';
import { parseBudget, parseInteger, parseNumber, parsePositiveInteger, parseReplaySpec } from '../../src/cli/parse.js';
import { parseBindHost } from '../../src/cli/serve.js';
import { parseOllamaHost } from '../../src/config/host.js';
import { parseKeepAlive, parseThink } from '../../src/config/settings.js';
import { ArgoError } from '../../src/errors.js';
import { OLLAMA_OPTIONS, parseOptionAssignments } from '../../src/ollama/options.js';
import { parseChoices, parseDuration, parseWhen } from '../../src/query/query.js';
import { MIN_BUDGET } from '../../src/replay/policy.js';
import { readReplaySpec, replaySpecText } from '../../src/replay/spec.js';
import { parseToolList } from '../../src/tools/toolsets.js';
import { hostileText, runs } from '../support/property.js';

/** What a parser did: its value, or the error it threw. */
function outcome<T>(parse: () => T): { value: T } | { error: unknown } {
  try {
    return { value: parse() };
  } catch (error) {
    return { error };
  }
}

/** The parser returned, or refused with an error of ours (or commander's) on one line. */
function expectCleanRefusal(result: { value: unknown } | { error: unknown }, input: unknown): void {
  if (!('error' in result)) return;
  const { error } = result;
  const shown = JSON.stringify(input);
  expect(error instanceof ArgoError || error instanceof InvalidArgumentError, `${shown}: ${String(error)}`).toBe(true);
  const message = error instanceof Error ? error.message : '';
  expect(message, shown).not.toBe('');
  expect(message, shown).not.toMatch(/[\n\r]/);
}

/** Text typed on a command line: pieces of the forms parsers know, digits, signs and separators, and anything. */
function typed(words: readonly string[]): fc.Arbitrary<string> {
  const piece = fc.oneof(
    { arbitrary: fc.constantFrom(...words), weight: 3 },
    { arbitrary: fc.constantFrom('0', '1', '7', '12', '2025', '9007199254740993', '1e3', '.', '-', '+', ':', ',', '=', ' ', 'T', 'Z', '[', ']', '/', '@', '#', '\n', '\t', '\u00a0'), weight: 4 },
    { arbitrary: fc.nat().map(String), weight: 1 },
    { arbitrary: hostileText(2), weight: 1 },
  );
  return fc.array(piece, { maxLength: 6 }).map((pieces) => pieces.join(''));
}

describe('flag values', () => {
  const numbers = typed(['e', 'E', '0x', 'Infinity', 'NaN', '00', '٣']);

  it('the number parsers return what Number() reads from decimal digits, or refuse', () => {
    fc.assert(
      fc.property(numbers, (text) => {
        for (const parse of [parseBudget, parseNumber, parseInteger, parsePositiveInteger, parseCount]) {
          const result = outcome(() => parse(text));
          expectCleanRefusal(result, text);
          if ('value' in result) {
            expect(Number.isFinite(result.value), text).toBe(true);
            expect(result.value).toBe(Number(text));
          }
        }
        const integer = outcome(() => parseInteger(text));
        if ('value' in integer) expect(Number.isSafeInteger(integer.value)).toBe(true);
        const budget = outcome(() => parseBudget(text));
        if ('value' in budget) expect(budget.value).toBeGreaterThanOrEqual(MIN_BUDGET);
      }),
      runs(400),
    );
  });

  it('take every whole number they document', () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), (n) => {
        expect(parseInteger(String(n))).toBe(n);
        if (n >= 0) expect(parseCount(String(n))).toBe(n);
        if (n >= 1) expect(parsePositiveInteger(String(n))).toBe(n);
        if (n >= MIN_BUDGET) expect(parseBudget(String(n))).toBe(n);
        expect(parseNumber(String(n))).toBe(n);
      }),
      runs(200),
    );
  });

  it('--replay reads none, session and last:N (N ≥ 1), blanks around them allowed, and refuses anything else', () => {
    fc.assert(
      fc.property(typed(['none', 'session', 'last', 'last:', 'LAST:']), (text) => {
        const result = outcome(() => parseReplaySpec(text));
        expectCleanRefusal(result, text);
        if ('value' in result) expect(replaySpecText(result.value)).toBe(text.trim().replace(/^last:0*(?=\d)/, 'last:'));
      }),
      runs(300),
    );
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom('none', 'session'), fc.integer({ min: 1, max: 2 ** 53 - 1 }).map((n) => `last:${n}`)), fc.constantFrom('', ' ', '\t'), (spec, blank) => {
        const read = readReplaySpec(`${blank}${spec}${blank}`);
        expect(read && replaySpecText(read)).toBe(spec);
      }),
      runs(100),
    );
  });

  it('--host of argo serve is an IP address or a host name, or refused', () => {
    fc.assert(
      fc.property(typed(['127.0.0.1', '::1', '[::1]', '0.0.0.0', 'localhost', 'a-b.example', '-x', 'x-', '256.1.1.1', 'fe80::1%eth0']), (text) => {
        const result = outcome(() => parseBindHost(text));
        expectCleanRefusal(result, text);
      }),
      runs(300),
    );
  });
});

describe('-o key=value', () => {
  const names = Object.keys(OLLAMA_OPTIONS);
  const assignment = fc.oneof(
    fc.tuple(fc.constantFrom(...names, 'keep_alive', 'mirostat', 'temprature', '__proto__', 'constructor', ''), typed(['true', 'false', '0.7', '-1', '1e3', 'Infinity', '0x10'])).map(([name, value]) => `${name}=${value}`),
    typed(['=', 'num_ctx', 'stop']),
  );

  it('gives each option a value of its kind, stop collecting every value, or refuses on one line', () => {
    fc.assert(
      fc.property(fc.array(assignment, { maxLength: 4 }), (assignments) => {
        const result = outcome(() => parseOptionAssignments(assignments));
        expectCleanRefusal(result, assignments);
        if (!('value' in result)) return;
        for (const [name, value] of Object.entries(result.value)) {
          const kind = OLLAMA_OPTIONS[name];
          if (kind === 'integer') expect(Number.isSafeInteger(value)).toBe(true);
          else if (kind === 'number') expect(typeof value === 'number' && Number.isFinite(value)).toBe(true);
          else if (kind === 'boolean') expect(typeof value).toBe('boolean');
          else expect(Array.isArray(value) && value.length === assignments.filter((each) => each.split('=')[0]?.trim() === 'stop').length).toBe(true);
        }
      }),
      runs(400),
    );
  });
});

describe('lists and words', () => {
  it('--tools is split on commas into trimmed names, or refused for an empty one', () => {
    fc.assert(
      fc.property(typed(['fs', 'edit', 'dev', '-shell', 'none', 'mcp:github', ',', ' , ']), (text) => {
        const result = outcome(() => parseToolList(text, '--tools'));
        expectCleanRefusal(result, text);
        if ('value' in result) expect(result.value).toEqual(text.split(',').map((name) => name.trim()));
      }),
      runs(300),
    );
  });

  it('--think, --keep-alive, --type-like choices and OLLAMA_HOST read their words or refuse on one line', () => {
    fc.assert(
      fc.property(
        typed(['on', 'off', 'true', 'FALSE', 'low', 'max', '10m', '1h30m', '-1', '1.5s', 'µs', 'ns', 'http://', 'https://', 'ftp://', 'ollama.com', 'user:pw@', ':11434', 'question', 'meta']),
        (text) => {
          expectCleanRefusal(outcome(() => parseThink(text, '--think')), text);
          expectCleanRefusal(outcome(() => parseKeepAlive(text, '--keep-alive')), text);
          expectCleanRefusal(outcome(() => parseChoices([text], ['question', 'meta', 'other'], '--type')), text);
          const host = outcome(() => parseOllamaHost(text, '--host'));
          expectCleanRefusal(host, text);
          if ('value' in host) expect(URL.canParse(host.value)).toBe(true);
        },
      ),
      runs(400),
    );
  });
});

describe('--since and --until', () => {
  const NOW = new Date(2025, 5, 15, 13, 30, 0);
  const duration = fc.array(fc.tuple(fc.nat({ max: 400 }), fc.constantFrom('s', 'm', 'h', 'd', 'w')), { minLength: 1, maxLength: 3 });

  it('read any text as a valid time or refuse it on one line', () => {
    fc.assert(
      fc.property(typed(['now', 'today', 'yesterday', '2025-01-31', '2025-13-01', '2025-02-30', 'T14:00', ' 14:00', '+02:00', '99999999999999999999d', '1w', '3h', '1d12h']), fc.constantFrom('start' as const, 'end' as const), (text, edge) => {
        const result = outcome(() => parseWhen(text, NOW, edge, '--since'));
        expectCleanRefusal(result, text);
        if ('value' in result) expect(Number.isNaN(result.value.getTime()), text).toBe(false);
      }),
      runs(500),
    );
  });

  it('read a duration as that long before now, a date as its whole day, and the day words', () => {
    fc.assert(
      fc.property(duration, fc.date({ min: new Date(1900, 0, 1), max: new Date(2999, 11, 31), noInvalidDate: true }), (parts, day) => {
        const text = parts.map(([amount, unit]) => `${amount}${unit}`).join('');
        const want = parseDuration(text);
        expect(want).not.toBeNull();
        expect(parseWhen(text, NOW, 'start', '--since').getTime()).toBe(sub(NOW, want ?? {}).getTime());
        const date = `${String(day.getFullYear()).padStart(4, '0')}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`;
        expect(parseWhen(date, NOW, 'start', '--since').getTime()).toBe(startOfDay(day).getTime());
        expect(parseWhen(` ${date} `, NOW, 'end', '--until').getTime()).toBe(endOfDay(day).getTime());
        expect(parseWhen('yesterday', NOW, 'end', '--until').getTime()).toBe(endOfDay(addDays(NOW, -1)).getTime());
      }),
      runs(200),
    );
  });
});
