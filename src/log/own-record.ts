// A record schema that checks every own key of a parsed file, `__proto__` included.
import * as z from 'zod';

/**
 * z.record(z.string(), value), with a key named `__proto__` checked like any other. zod's records
 * pass over that key (so that parsing never sets a prototype) and would accept any value there
 * unseen, where Argo's hand checks (isLogEntry, isMemo) check it: in a parsed file it is an own key
 * like the rest (a memo may hold one).
 */
export function ownRecord<V extends z.ZodType>(value: V) {
  return z.preprocess((input: unknown, ctx) => {
    const own = typeof input === 'object' && input !== null ? Object.getOwnPropertyDescriptor(input, '__proto__') : undefined;
    if (own !== undefined) {
      const parsed = value.safeParse(own.value);
      for (const issue of parsed.success ? [] : parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', path: ['__proto__', ...issue.path], input: own.value });
    }
    return input;
  }, z.record(z.string(), value));
}
