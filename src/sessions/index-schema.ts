// The index line's zod schema: the definition isIndexLine (turn-index.ts) must agree with, which
// test/sessions/index-check.test.ts proves. Apart so that reading an index never loads zod.
import { basename } from 'node:path';
import * as z from 'zod';
import { isLogFileName } from '../log/files.js';
import { ENTRY_TYPES } from '../replay/types.js';

export const IndexLineSchema = z.object({
  id: z.string().min(1),
  // A daily log file's bare name: an index never points outside the logs folder.
  file: z.string().refine((file) => isLogFileName(file) && file === basename(file)),
  offset: z.number().int().nonnegative(),
  length: z.number().int().positive(),
  // Any word, as a log line's status: a newer Argo's is kept, never replayed.
  status: z.string(),
  type: z.enum(ENTRY_TYPES),
  rules: z.string().optional(),
});
