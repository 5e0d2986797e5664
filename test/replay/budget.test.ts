import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { applyBudget, budgetTurns, codePoints, elideMiddle, RENDER_OVERHEAD, renderTurn, turnCost } from '../../src/replay/budget.js';
import { filterByReason, standingByReason } from '../../src/replay/filter.js';
import type { CandidateTurn } from '../../src/replay/filter.js';
import type { TurnText } from '../../src/replay/types.js';

type EagerCandidate = CandidateTurn & TurnText;

const MARKER = / \[… (\d+) characters elided …\] /u;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/u;

function turn(id: string, prompt: string, response: string, isProtected = false): EagerCandidate {
  return { id, prompt, response, entry_type: 'question', protected: isProtected };
}

/** A turn whose rendered replay text is exactly `cost` code points. */
function turnOfCost(id: string, cost: number, isProtected = false): EagerCandidate {
  return turn(id, 'p', 'r'.repeat(cost - RENDER_OVERHEAD - 1), isProtected);
}

/** Four turns a, b, c, d (oldest first); c and d are the protected most recent two. */
function four(costs: readonly [number, number, number, number]): EagerCandidate[] {
  return costs.map((cost, i) => turnOfCost('abcd'[i] ?? '?', cost, i >= 2));
}

describe('cost of a turn: code points of "User: {prompt}\\nAssistant: {response}\\n"', () => {
  it('renders the replay text', () => {
    expect(renderTurn('hi', 'there')).toBe('User: hi\nAssistant: there\n');
    expect(RENDER_OVERHEAD).toBe(19);
  });

  it.each([
    ['', 0],
    ['abc', 3],
    ['é', 1], // precomposed
    ['e\u0301', 2], // e + combining accent: two code points
    ['日本語', 3],
    ['😀', 1], // one astral code point, two UTF-16 units
    ['😀😀', 2],
    ['👍🏽', 2], // emoji + skin-tone modifier
    ['👨‍👩‍👧', 5], // three people joined by two ZWJs
    ['\ud800', 1], // a lone surrogate still counts once
    ['a\udc00b', 3],
  ])('%j has %i code points', (text, count) => {
    expect(codePoints(text)).toBe(count);
    expect(codePoints(text)).toBe(Array.from(text).length);
  });

  it.each([
    ['hi', 'there', 26],
    ['', '', 19],
    ['😀', '😀😀', 22],
    ['Straße?', 'Ja — genau.', 37],
  ])('turnCost(%j, %j) = %i', (prompt, response, cost) => {
    expect(turnCost({ prompt, response })).toBe(cost);
    expect(turnCost({ prompt, response })).toBe(codePoints(renderTurn(prompt, response)));
  });
});

describe('applyBudget: drop the oldest unprotected turns until the total fits', () => {
  it.each<[string, [number, number, number, number], number, string[], number, boolean]>([
    // name, costs of a..d (c, d protected), cap, used ids, chars_used, trimmed
    ['well under the cap', [100, 100, 100, 100], 5500, ['a', 'b', 'c', 'd'], 400, false],
    ['exactly at the cap: nothing trimmed', [100, 100, 100, 100], 400, ['a', 'b', 'c', 'd'], 400, false],
    ['one over: the oldest goes', [100, 100, 100, 100], 399, ['b', 'c', 'd'], 300, true],
    ['oldest first, even when a later turn is bigger', [50, 300, 100, 100], 450, ['c', 'd'], 200, true],
    ['stops as soon as the rest fits', [300, 50, 100, 100], 300, ['b', 'c', 'd'], 250, true],
    ['protected turns alone exactly at the cap', [100, 100, 100, 100], 200, ['c', 'd'], 200, true],
  ])('%s', (_name, costs, cap, used, charsUsed, trimmed) => {
    const result = applyBudget(four(costs), cap);
    expect(result.used.map((t) => t.id)).toEqual(used);
    expect(result.dropped.map((t) => t.id)).toEqual(['a', 'b', 'c', 'd'].filter((id) => !used.includes(id)));
    expect(result.charsUsed).toBe(charsUsed);
    expect(result.trimmed).toBe(trimmed);
    expect(result.used.every((t) => !t.elided)).toBe(true);
    expect(result.used.map((t) => t.chars)).toEqual(result.used.map((t) => turnCost(t)));
  });

  it.each<[string, CandidateTurn[], number, string[], number, boolean]>([
    ['no turns', [], 200, [], 0, false],
    ['nothing protected and nothing fits', [turnOfCost('a', 300), turnOfCost('b', 300)], 200, [], 0, true],
    ['nothing protected, the newest fits', [turnOfCost('a', 300), turnOfCost('b', 200)], 200, ['b'], 200, true],
  ])('%s', (_name, turns, cap, used, charsUsed, trimmed) => {
    const result = applyBudget(turns, cap);
    expect(result.used.map((t) => t.id)).toEqual(used);
    expect(result.charsUsed).toBe(charsUsed);
    expect(result.trimmed).toBe(trimmed);
  });

  it('counts an emoji as one character', () => {
    // 19 + 1 + 90 emoji = 110 code points (200 UTF-16 units): two such turns fit a cap of 220 exactly.
    const turns = [turn('a', '?', '😀'.repeat(90), true), turn('b', '?', '😀'.repeat(90), true)];
    const result = applyBudget(turns, 220);
    expect(result.charsUsed).toBe(220);
    expect(result.trimmed).toBe(false);
    expect(result.used.map((t) => t.response)).toEqual(turns.map((t) => t.response));
  });
});

describe('applyBudget: protected turns over the cap are elided, never dropped', () => {
  it.each<[string, [number, number, number, number], number, boolean[]]>([
    // name, costs of a..d (c, d protected), cap, elided of c, d
    ['protected turns exactly at the cap: nothing shortened', [100, 100, 100, 100], 200, [false, false]],
    ['protected turns one over the cap (cap + 1): shortened', [100, 100, 100, 101], 200, [false, true]],
    ['protected turns one over the cap: the longer one is shortened', [100, 100, 150, 151], 300, [false, true]],
    ['protected turns two over the cap', [100, 100, 100, 102], 200, [false, true]],
  ])('%s', (_name, costs, cap, elided) => {
    const result = applyBudget(four(costs), cap);
    expect(result.used.map((t) => t.id)).toEqual(['c', 'd']);
    expect(result.used.map((t) => t.elided)).toEqual(elided);
    expect(result.charsUsed).toBeLessThanOrEqual(cap);
    expect(result.charsUsed).toBe(result.used.reduce((sum, t) => sum + turnCost(t), 0));
    expect(result.trimmed).toBe(true);
  });

  it('shortens the responses in the middle behind a visible marker and keeps the prompts', () => {
    const response = 'HEAD-' + 'x'.repeat(2000) + '-TAIL';
    const result = applyBudget([turnOfCost('a', 300), turn('b', 'first prompt', response, true), turn('c', 'second prompt', 'short answer', true)], 500);
    expect(result.dropped.map((t) => t.id)).toEqual(['a']);
    expect(result.used.map((t) => [t.id, t.elided])).toEqual([
      ['b', true],
      ['c', false],
    ]);
    const [b, c] = result.used;
    expect(b?.prompt).toBe('first prompt');
    expect(c?.response).toBe('short answer');
    expect(b?.response.startsWith('HEAD-')).toBe(true);
    expect(b?.response.endsWith('-TAIL')).toBe(true);
    const removed = Number(MARKER.exec(b?.response ?? '')?.[1]);
    expect(codePoints(b?.response ?? '') - codePoints(MARKER.exec(b?.response ?? '')?.[0] ?? '') + removed).toBe(codePoints(response));
    expect(result.charsUsed).toBe(500);
    expect(result.trimmed).toBe(true);
  });

  it('splits the room so a short response stays whole and long ones share the rest', () => {
    const turns = [turn('a', 'p', 'y'.repeat(3000), true), turn('b', 'p', 'tiny', true), turn('c', 'p', 'z'.repeat(3000), true)];
    const result = applyBudget(turns, 1000);
    expect(result.used.map((t) => t.elided)).toEqual([true, false, true]);
    expect(result.used[1]?.response).toBe('tiny');
    const [a, , c] = result.used.map((t) => t.chars);
    expect(Math.abs((a ?? 0) - (c ?? 0))).toBeLessThanOrEqual(1);
    expect(result.charsUsed).toBe(1000);
  });

  it('elides a 1 MB response down to the default cap', () => {
    const response = 'ab'.repeat(500_000);
    const result = applyBudget([turn('a', 'Summarise this log', response, true)], 5500);
    const used = result.used[0];
    expect(result.charsUsed).toBe(5500);
    expect(used?.prompt).toBe('Summarise this log');
    expect(used?.response).toMatch(MARKER);
    expect(Number(MARKER.exec(used?.response ?? '')?.[1])).toBeGreaterThan(990_000);
  });

  it('elides multi-byte and emoji text without splitting a code point', () => {
    const response = '日本😀👍🏽é'.repeat(3000);
    const result = applyBudget([turn('a', 'Привет 👋', response, true), turn('b', 'ok', '🙂'.repeat(4000), true)], 700);
    expect(result.charsUsed).toBeLessThanOrEqual(700);
    for (const used of result.used) {
      expect(used.response).toMatch(MARKER);
      expect(used.response).not.toMatch(LONE_SURROGATE);
      expect(used.chars).toBe(codePoints(renderTurn(used.prompt, used.response)));
    }
  });

  it('shortens a prompt larger than the cap too, and still marks the response', () => {
    const result = applyBudget([turn('a', 'q'.repeat(10_000), 'answer', true)], 500);
    const used = result.used[0];
    expect(used?.prompt).toMatch(MARKER);
    expect(used?.response).toBe('…');
    expect(result.charsUsed).toBe(500);
  });

  it('marks every shortened response even when the prompts fill the room exactly', () => {
    // Room for text is 200 - 2 × 19 = 162; two 81-character prompts fill it.
    const result = applyBudget([turn('a', 'p'.repeat(81), 'r'.repeat(1000), true), turn('b', 'p'.repeat(81), 'r'.repeat(1000), true)], 200);
    expect(result.used.map((t) => t.response)).toEqual(['…', '…']);
    expect(result.charsUsed).toBe(200);
  });

  // At the least budget the policy allows (21 per protected turn), a cut prompt or response is at
  // least "…": never sent empty, as if the turn had said nothing.
  it.each<[number, number, number]>([
    // protected turns, cap, prompt length
    [10, 210, 500],
    [10, 210, 1],
    [9, 200, 500],
    [2, 200, 5000],
    [12, 252, 30],
  ])('%i protected turns at a cap of %i, prompts of %i: every prompt and response keeps a visible mark', (count, cap, promptLength) => {
    const turns = Array.from({ length: count }, (_, i) => turn(`p${i}`, 'q'.repeat(promptLength), 'r'.repeat(1000), true));
    const result = applyBudget(turns, cap);
    expect(result.used).toHaveLength(count);
    expect(result.charsUsed).toBeLessThanOrEqual(cap);
    for (const used of result.used) {
      expect(used.prompt).not.toBe('');
      expect(used.response).not.toBe('');
      if (used.prompt.length < promptLength) expect(used.prompt).toMatch(/…/u);
    }
  });

  it('never exceeds the cap, never drops a protected turn, and marks every cut (sizes × caps)', () => {
    const sizes = [0, 1, 7, 30, 120, 800, 6000];
    const texts = (n: number, seed: number): string => ['a', 'é', '日', '😀', 'a😀'][seed % 5]?.repeat(n) ?? '';
    let cases = 0;
    for (const cap of [200, 201, 233, 500, 1000, 2047, 5500, 9000]) {
      for (const [i, promptSize] of sizes.entries()) {
        for (const [j, responseSize] of sizes.entries()) {
          const turns = [
            turn('old', texts(promptSize, i), texts(responseSize, j)),
            turn('p1', texts(promptSize, i + 1), texts(responseSize, j + 2), true),
            turn('p2', texts(sizes[(i + 3) % sizes.length] ?? 0, i + 2), texts(responseSize, j + 3), true),
          ];
          const total = turns.reduce((sum, t) => sum + turnCost(t), 0);
          const result = applyBudget(turns, cap);
          cases++;
          expect(result.charsUsed).toBeLessThanOrEqual(cap);
          expect(result.charsUsed).toBe(result.used.reduce((sum, t) => sum + t.chars, 0));
          expect(result.used.filter((t) => t.protected).map((t) => t.id)).toEqual(['p1', 'p2']);
          expect(result.trimmed).toBe(total > cap);
          if (total <= cap) expect(result.charsUsed).toBe(total);
          for (const used of result.used) {
            const original = turns.find((t) => t.id === used.id);
            expect(used.chars).toBe(turnCost(used));
            expect(used.response).not.toMatch(LONE_SURROGATE);
            if (used.response !== original?.response) expect(used.response).toMatch(/…/u);
            if (used.prompt !== original?.prompt) expect(used.prompt).toMatch(/…/u);
            expect(used.elided).toBe(used.response !== original?.response || used.prompt !== original.prompt);
          }
          // Elision behind a full marker uses the room it was given instead of cutting too much.
          // (A share too small for the marker becomes a bare "…", which can leave some room unused.)
          const cuts = result.used.filter((t) => t.elided);
          if (cuts.length > 0 && cuts.every((t) => MARKER.test(t.response) && !t.prompt.includes('…'))) {
            expect(result.charsUsed).toBeGreaterThanOrEqual(cap - result.used.length);
          }
        }
      }
    }
    expect(cases).toBe(8 * sizes.length * sizes.length);
  });
});

describe('elideMiddle', () => {
  it.each([
    ['short text stays (exact fit)', 'abc', 3, 'abc'],
    ['short text stays (room left)', 'abc', 10, 'abc'],
    ['100 × "a" into 40', 'a'.repeat(100), 40, 'aaaaaa [… 88 characters elided …] aaaaaa'],
    ['head and tail are kept', 'abcdefghij'.repeat(10), 40, 'abcdef [… 88 characters elided …] efghij'],
    ['100 × "x" into 30', 'x'.repeat(100), 30, 'x [… 98 characters elided …] x'],
    ['no room for the full marker: a bare ellipsis still shows the cut', 'x'.repeat(100), 28, '…'],
    ['one code point of room', 'x'.repeat(100), 1, '…'],
    ['no room at all', 'x'.repeat(100), 0, ''],
    ['emoji are cut between code points', '😀'.repeat(100), 40, '😀😀😀😀😀😀 [… 88 characters elided …] 😀😀😀😀😀😀'],
    ['a lone high surrogate counts as one, and a pair after it stays whole', `\ud83d😀${'x'.repeat(96)}😀\ude00`, 40, `\ud83d😀xxxx [… 88 characters elided …] xxxx😀\ude00`],
    ['a lone low surrogate at the cut is one code point', `${'a'.repeat(6)}\ude00${'b'.repeat(93)}`, 40, `aaaaaa [… 88 characters elided …] bbbbbb`],
  ])('%s', (_name, text, max, expected) => {
    expect(elideMiddle(text, max)).toBe(expected);
  });

  it('an answer of 100 MB is cut within a heap of 256 MB (an array of its characters alone took 800 MB)', () => {
    const budget = fileURLToPath(new URL('../../src/replay/budget.ts', import.meta.url));
    const script = `const { elideMiddle } = await import(${JSON.stringify(budget)}); console.log(elideMiddle('x'.repeat(100_000_000), 40));`;
    const result = spawnSync(process.execPath, ['--max-old-space-size=256', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect({ status: result.status, stdout: result.stdout }).toEqual({ status: 0, stdout: 'xxx [… 99999994 characters elided …] xxx\n' });
  });

  it('always fits max code points', () => {
    const text = 'Ωmega 😀 '.repeat(500);
    for (let max = 0; max <= 4600; max += 13) {
      expect(codePoints(elideMiddle(text, max))).toBeLessThanOrEqual(max);
    }
  });
});

describe('budgetTurns: the filter as a rule, the turns not copied', () => {
  const types = ['meta', 'question', 'instruction', 'other', 'correction', 'instruction', 'meta', 'question'] as const;
  // Mixed types and costs, two of them long enough that the protected pair is elided at small caps.
  const history = types.map((entry_type, i) => ({ id: `t${i}`, prompt: `p${i}`, response: 'r'.repeat(i % 3 === 0 ? 400 : 60), entry_type }));

  it.each<[number, number]>([
    // cap, protected count
    [5500, 2],
    [300, 2],
    [150, 2],
    [100, 0],
    [5500, 8],
    [120, 8],
  ])('cap %i, %i protected: what applyBudget makes of filterByReason copies', (cap, protectedCount) => {
    const allowed = ['question', 'instruction'] as const;
    const before = structuredClone(history);
    const expected = applyBudget(filterByReason(history, allowed, protectedCount).kept, cap);
    const result = budgetTurns(history, standingByReason(history, allowed, protectedCount), cap);
    expect(result.used).toEqual(expected.used);
    expect(result.dropped.map((t) => t.id)).toEqual(expected.dropped.map((t) => t.id));
    expect([result.charsUsed, result.trimmed]).toEqual([expected.charsUsed, expected.trimmed]);
    expect(history).toEqual(before);
  });
});
