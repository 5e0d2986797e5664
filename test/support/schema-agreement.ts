// A hand check must give its zod schema's verdict: every single-field change of a good value is put
// to both, and the ones where they differ are named (table tests); the property tests put changes
// of generated good values to both (mutationsOf).
import fc from 'fast-check';
import { hostileText } from './property.js';

interface Schema {
  safeParse: (value: unknown) => { success: boolean };
}

/** `base` with `probe` in place of each field in turn (undefined removes the field): where `check` and `schema` disagree. */
export function disagreements(base: Record<string, unknown>, probes: readonly unknown[], check: (value: unknown) => boolean, schema: Schema): string[] {
  const found: string[] = [];
  for (const key of Object.keys(base)) {
    for (const probe of probes) {
      const value: Record<string, unknown> = { ...base, [key]: probe };
      if (probe === undefined) Reflect.deleteProperty(value, key);
      const expected = schema.safeParse(value).success;
      if (check(value) !== expected) found.push(`${key} = ${shown(probe)}: zod ${expected}`);
    }
  }
  return found;
}

function shown(probe: unknown): string {
  if (probe === undefined) return '(removed)';
  return typeof probe === 'number' ? String(probe) : JSON.stringify(probe);
}

type Path = (string | number)[];

/** Every path into a JSON value, the value itself ([]) first: object keys and array indexes, down to the leaves. */
export function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const found: Path[] = [prefix];
  if (Array.isArray(value)) value.forEach((item, index) => found.push(...pathsOf(item, [...prefix, index])));
  else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) found.push(...pathsOf(item, [...prefix, key]));
  return found;
}

function at(value: unknown, path: Path): unknown {
  let current = value;
  for (const key of path) current = (current as Record<string | number, unknown>)[key];
  return current;
}

/** Sets an own property as JSON.parse makes it: `__proto__` is a key like any other, not the prototype. */
function put(parent: object, key: string | number, value: unknown): void {
  Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
}

/** One change to a value: a node removed, replaced, or an object given one more key. */
type Change = { kind: 'remove'; path: Path } | { kind: 'set'; path: Path; value: unknown } | { kind: 'add'; path: Path; key: string; value: unknown };

function applied(base: unknown, change: Change): unknown {
  const copy = structuredClone(base);
  const { path } = change;
  if (change.kind === 'add') {
    const target = at(copy, path);
    if (typeof target === 'object' && target !== null && !Array.isArray(target)) put(target, change.key, change.value);
    return copy;
  }
  if (path.length === 0) return change.kind === 'set' ? change.value : copy;
  const parent = at(copy, path.slice(0, -1)) as object;
  const last = path[path.length - 1] ?? '';
  if (change.kind === 'set') put(parent, last, change.value);
  else if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else Reflect.deleteProperty(parent, last);
  return copy;
}

/** Numbers where the rules have edges: signs, zero's two signs, fractions, the safe-integer edge, beyond JSON. */
const EDGE_NUMBERS = [0, -0, 1, -1, 0.5, 1.5, 2, 2 ** 31, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), 1e308, Number.MAX_VALUE, Number.MIN_VALUE, Infinity, -Infinity, Number.NaN];

/**
 * Values to put where a field was: every JSON type, the edges of numbers, `words` (the enums and
 * patterns of the schema at hand, so that a change may also be right), awkward text, small arrays
 * and objects of them.
 */
function probeValues(words: readonly string[]): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(
    fc.constantFrom<unknown>(null, true, false, ...EDGE_NUMBERS),
    fc.integer({ min: -5, max: 5 }),
    fc.double(),
    fc.constantFrom('', ...words),
    hostileText(4),
  );
  return fc.oneof(
    { arbitrary: leaf, weight: 6 },
    { arbitrary: fc.array(leaf, { maxLength: 3 }), weight: 2 },
    { arbitrary: fc.dictionary(fc.constantFrom('a', ...words), leaf, { maxKeys: 3 }), weight: 1 },
    { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
  );
}

/** Keys an extra one may take: the schema's own (an optional field the value lacked), strangers, and the prototype's names. */
function extraKeys(fields: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', ...fields), fc.string({ maxLength: 6 }));
}

/**
 * Values near `valid`'s: one to three changes each, a node removed, replaced by a probe or by
 * another node of the same value (a field of the wrong shape that is right somewhere else), or an
 * object given one more key. `words` are the schema's fixed strings, `fields` its field names.
 */
export function mutationsOf(valid: fc.Arbitrary<unknown>, words: readonly string[], fields: readonly string[]): fc.Arbitrary<unknown> {
  const probe = probeValues(words);
  const key = extraKeys(fields);
  const step = (value: unknown): fc.Arbitrary<unknown> => {
    const paths = pathsOf(value);
    const nodes = paths.map((path) => at(value, path));
    const path = fc.constantFrom(...paths);
    const change: fc.Arbitrary<Change> = fc.oneof(
      path.map((p): Change => ({ kind: 'remove', path: p })),
      fc.tuple(path, probe).map(([p, v]): Change => ({ kind: 'set', path: p, value: v })),
      fc.tuple(path, fc.constantFrom(...nodes)).map(([p, v]): Change => ({ kind: 'set', path: p, value: structuredClone(v) })),
      fc.tuple(path, key, probe).map(([p, k, v]): Change => ({ kind: 'add', path: p, key: k, value: v })),
    );
    return change.map((c) => applied(value, c));
  };
  return fc
    .tuple(valid, fc.integer({ min: 1, max: 3 }))
    .chain(([value, count]) => {
      let changed: fc.Arbitrary<unknown> = step(value);
      for (let i = 1; i < count; i++) changed = changed.chain(step);
      return changed;
    });
}

/** Number literals JSON takes that JSON.stringify never writes: past a double, -0, whole numbers with a fraction or an exponent, past 2^53. */
const NUMBER_SPELLINGS = ['1e999', '-1e999', '-0', '0.0', '3.0', '1E2', '1e-400', '-1e-400', '9007199254740993', '9007199254740992', '0.1e1', '100e-2'];

/** JSON texts of `valid`'s values with one of their numbers written another way: readers parse text, which JSON.stringify alone never shows them. */
export function respelledNumbers(valid: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return valid.chain((value) => {
    const numbers = pathsOf(value).filter((path) => path.length > 0 && typeof at(value, path) === 'number');
    if (numbers.length === 0) return fc.constant(JSON.stringify(value));
    const marker = JSON.stringify('\u0000number\u0000');
    return fc
      .tuple(fc.constantFrom(...numbers), fc.constantFrom(...NUMBER_SPELLINGS))
      .map(([path, spelling]) => JSON.stringify(applied(value, { kind: 'set', path, value: '\u0000number\u0000' })).replace(marker, spelling));
  });
}

/** `value` shown for a failure report: JSON, with what JSON cannot say spelled out. */
export function showValue(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'number' && !Number.isFinite(item) ? String(item) : Object.is(item, -0) ? '-0' : item));
}
