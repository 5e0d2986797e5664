// A chat's /last: what it prints, with the session's record read once per command.
import { basename } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type * as Fs from '../../src/log/fs.js';
import type { Io } from '../../src/cli/io.js';
import type { LogEntry } from '../../src/log/entry.js';
import { recordTurns, tempData } from '../query/helpers.js';

const reads = vi.hoisted(() => ({ files: [] as string[] }));

vi.mock('../../src/log/fs.js', async (importOriginal) => {
  const original = await importOriginal<typeof Fs>();
  return {
    ...original,
    readDataText: (path: string): string => {
      reads.files.push(path);
      return original.readDataText(path);
    },
  };
});

const { chatLastText } = await import('../../src/cli/last.js');

function pipedIo(terminal = false): { io: Io; stderr: () => string } {
  let stderr = '';
  const io = { stdout: { write: () => true, isTTY: terminal }, stderr: { write: (text: string) => (stderr += text), isTTY: false } } as unknown as Io;
  return { io, stderr: () => stderr };
}

describe("a chat's /last", () => {
  it.each<[string, number, ((i: number) => Partial<LogEntry>) | undefined, string, string]>([
    ['no session yet', 0, undefined, 'no answer yet in session "work"\n', ''],
    ['two turns', 2, undefined, 'work answer 2\n', ''],
    ['a last turn interrupted', 1, () => ({ status: 'interrupted', model_response: 'Half an ans' }), 'Half an ans\n', 'ended "interrupted", so its answer is partial (argo last -s work --full shows why)'],
  ])('%s: the answer or a line saying there is none, with the record read once', async (_case, turns, shape, printed, said) => {
    const { paths } = tempData();
    if (turns > 0) await recordTurns(paths, 'work', turns, shape ? { shape } : {});
    const { io, stderr } = pipedIo();
    reads.files = [];
    expect(await chatLastText(paths, 'work', io, {})).toBe(printed);
    expect(reads.files.filter((file) => basename(file) === 'work.json')).toHaveLength(1);
    if (said === '') expect(stderr()).toBe('');
    else expect(stderr()).toContain(said);
  });

  // The chat's --raw is /last's too, as it is its answers'.
  it.each<[string, boolean, boolean, string]>([
    ['on a terminal', true, false, 'a ^[[31mred^[[0m answer\n'],
    ['on a terminal with --raw', true, true, 'a \x1b[31mred\x1b[0m answer\n'],
    ['piped', false, false, 'a \x1b[31mred\x1b[0m answer\n'],
  ])('an answer holding escape sequences, %s', async (_case, terminal, raw, printed) => {
    const { paths } = tempData();
    await recordTurns(paths, 'work', 1, { shape: () => ({ model_response: 'a \x1b[31mred\x1b[0m answer' }) });
    expect(await chatLastText(paths, 'work', pipedIo(terminal).io, raw ? { raw: true } : {})).toBe(printed);
  });
});
