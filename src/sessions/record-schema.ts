// The session record's zod schema: the definition isSessionRecord (store.ts) must agree with, which
// test/sessions/record-check.test.ts proves. Apart so that reading a record never loads zod.
import * as z from 'zod';

/**
 * Where a fork came from. A fork of a fork also carries its parent's own link, so the whole
 * lineage can be rebuilt from the log even after an ancestor's record is removed.
 */
export interface ParentLink {
  session_id: string;
  name: string;
  turn_id: string;
  parent?: ParentLink | undefined;
}

const ParentLinkSchema: z.ZodType<ParentLink> = z.lazy(() =>
  z.object({ session_id: z.string(), name: z.string(), turn_id: z.string(), parent: ParentLinkSchema.optional() }),
);

/** A session record (sessions/NAME.json); store.ts reads and writes it. */
export const SessionRecordSchema = z
  .object({
    name: z.string(),
    id: z.string().min(1),
    title: z.string(),
    turns: z.number().int().nonnegative(),
    created_at: z.string(),
    last_used_at: z.string(),
    last_model: z.string().nullable(),
    /** Set on a fork: its history starts with the parent's turns up to and including `turn_id`. */
    parent: ParentLinkSchema.optional(),
    /**
     * The newest turn in the session's history (for a fresh fork, the turn it was forked at). Every
     * writer appends the index line before saving the record, so an index without this id is stale.
     */
    last_turn_id: z.string().optional(),
    /**
     * Set while a rename is under way, on the record under the new name: the name it comes from. A
     * rename cut short (argo killed) is finished from it, never left as two sessions of one id.
     */
    renamed_from: z.string().optional(),
  })
  .loose();

export type SessionRecord = z.infer<typeof SessionRecordSchema>;
