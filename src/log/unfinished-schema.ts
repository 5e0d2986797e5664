// A journal file's zod schema (unfinished.ts): read only by recovery, so zod loads only then.
import * as z from 'zod';
import { LogEntrySchema } from './entry-schema.js';
import { TURN_STATUSES } from './entry-words.js';

const UnfinishedTurnSchema = z
  .object({
    owner: z.object({
      pid: z.number().int().positive(),
      host: z.string().min(1),
      boot: z.string().nullable(),
      // Not in files of earlier versions.
      machine: z.string().nullable().optional(),
      start: z.number().int().nonnegative().nullable().optional(),
      pidns: z.string().nullable().optional(),
    }),
    day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    session: z.object({ id: z.string().min(1).nullable(), name: z.string().min(1) }),
    rules: z.string().optional(),
    // The draft is a log line as it will be written: a status this version writes among them.
    entry: LogEntrySchema.and(z.object({ status: z.enum(TURN_STATUSES) })),
  })
  .loose();

/** What is wrong with a parsed journal file (the first wrong field), or null when it is one. */
export function unfinishedProblem(value: unknown): string | null {
  const parsed = UnfinishedTurnSchema.safeParse(value);
  if (parsed.success) return null;
  const [issue] = parsed.error.issues;
  if (issue === undefined) return 'not a journal file';
  // Quoted as JSON: the draft's keys (its options) may hold a newline, and the problem is one line.
  return `not a journal file (field ${JSON.stringify(issue.path.map(String).join('.') || '(top)')}: ${issue.message})`;
}
