// A turn's file in the journal of unfinished turns (log/unfinished.ts) while it is answered: what
// lets an argo started later log the turn if this one is killed before it can.
import { removeUnfinished, replaceUnfinished, thisProcess, unfinishedDir, unfinishedPath, writeUnfinished, writeUnfinishedNow } from '../log/unfinished.js';
import type { UnfinishedTurn } from '../log/unfinished.js';

export interface JournalEntry {
  /** Settles once the draft is written, or has failed to be (never rejects). */
  written: Promise<void>;
  /**
   * Leaves the draft in place for good: the only copy of a turn neither the log nor the rescue could
   * take. Returns its path; null when it was never written. Call it once `written` has settled.
   */
  keep: () => string | null;
  /**
   * Puts the draft with `fields` laid over it in place of the one there (an agent run's rounds so
   * far), so a turn whose argo is killed is logged with them. Taken as they are now; written one
   * after another, never after `remove`. A failure leaves the earlier draft, which still speaks for the turn.
   */
  update: (fields: Record<string, unknown>) => void;
  /**
   * Writes the draft now, synchronously, with the updates so far and `fields` laid over it: for a
   * process about to quit at once (a second Ctrl-C), so the next argo logs what the turn had. Nothing
   * when the draft is not known yet, its first write failed, or it was removed. Throws when it cannot.
   */
  saveNow: (fields: Record<string, unknown>) => void;
  /** The updates' fields laid over one another so far (an agent run's rounds); null before the first. */
  progress: () => Record<string, unknown> | null;
  /** Removes the draft once it is written, unless kept; for when the turn is logged, rescued, or will never be. */
  remove: () => Promise<void>;
}

/** Homes whose journal failed in this process: said once, not at every turn of a chat. */
const warned = new Set<string>();

/**
 * Writes the turn's draft as soon as it is known, while the answer streams. A failure never fails
 * the turn: it is logged as usual when it ends, and `onNotice` hears once per process that it is not
 * kept meanwhile (a line without "argo: ": the CLI and the server each start it with their name).
 * `replacing`: the turn's queued draft (queuedDraft) is in the journal, and this one takes its place.
 */
export function journalTurn(home: string, draft: Promise<Omit<UnfinishedTurn, 'owner'>>, onNotice?: (line: string) => void, replacing = false): JournalEntry {
  let id: string | null = null;
  let kept = false;
  let removed = false;
  // For saveNow: the draft once known, the updates' fields laid over it so far, and whether its
  // first write failed (nothing of this turn's to replace, or no way to write it).
  let known: Omit<UnfinishedTurn, 'owner'> | null = null;
  let progress: Record<string, unknown> | null = null;
  let failed = false;
  const written = draft
    .then(async (turn) => {
      known = turn;
      // A queued draft is there already: it speaks for the turn even if it cannot be replaced.
      if (replacing) id = turn.entry.id;
      await (replacing ? replaceUnfinished : writeUnfinished)(home, { owner: thisProcess(), ...turn });
      id = turn.entry.id;
    })
    .catch((error: unknown) => {
      if (!replacing) failed = true;
      if (warned.has(home)) return;
      warned.add(home);
      const reason = error instanceof Error ? error.message : String(error);
      onNotice?.(`cannot keep this turn in ${unfinishedDir(home)} while it is answered (${reason}); it is logged as usual when it ends, but would be lost if argo were killed first (argo doctor checks the data home)`);
    });
  // The updates, one at a time after the first write: a later one is never overwritten by an earlier.
  let updates: Promise<void> = written;
  return {
    written,
    update: (fields) => {
      // Copied now: the run goes on changing its records while the write waits.
      const taken = structuredClone(fields);
      progress = { ...progress, ...taken };
      updates = updates.then(async () => {
        if (id === null || removed) return;
        const turn = await draft;
        await replaceUnfinished(home, { owner: thisProcess(), ...turn, entry: { ...turn.entry, ...taken } }).catch(() => undefined);
      });
    },
    saveNow: (fields) => {
      if (known === null || removed || failed) return;
      const turn: UnfinishedTurn = { owner: thisProcess(), ...known, entry: { ...known.entry, ...progress, ...fields } };
      // Its first write not known to have landed: created only if nothing is there. Something there
      // is that write landing meanwhile (turn ids are random), and this one takes its place.
      if (id === null && !replacing && writeUnfinishedNow(home, turn, false)) return;
      writeUnfinishedNow(home, turn, true);
    },
    progress: () => progress,
    keep: () => {
      kept = id !== null;
      return id === null ? null : unfinishedPath(home, id);
    },
    remove: async () => {
      removed = true;
      // An update under way would put the file back after it is gone.
      await updates;
      // One left behind whose turn is in the log is dropped by the next argo that looks.
      if (id !== null && !kept) await removeUnfinished(home, id).catch(() => undefined);
    },
  };
}
