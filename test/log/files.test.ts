import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendDay, listLogFiles, requireDaysInReach, unwritableLogNames } from '../../src/log/files.js';
import { ScanStats } from '../../src/log/scan.js';
import { NotAFolderError, folderTrouble } from '../../src/log/fs.js';

/** Builds `logs/` from `layout` (name → 'file', 'dir', or 'link:<target>' relative to logs/); returns its path. */
function logsFolder(layout: Record<string, string>): string {
  const base = mkdtempSync(join(tmpdir(), 'argo-days-'));
  const logs = join(base, 'logs');
  mkdirSync(logs);
  writeFileSync(join(base, 'outside.log'), '');
  for (const [name, what] of Object.entries(layout)) {
    if (what === 'file') writeFileSync(join(logs, name), '');
    else if (what === 'dir') mkdirSync(join(logs, name));
    else symlinkSync(what.slice('link:'.length), join(logs, name));
  }
  return logs;
}

describe('listLogFiles: the days a reader reads, each file once', () => {
  async function listed(layout: Record<string, string>): Promise<string[]> {
    return (await listLogFiles(logsFolder(layout))).map((path) => basename(path));
  }

  it.each<[string, Record<string, string>, string[]]>([
    ['files, by date', { '2026-11-02.log': 'file', '2026-11-01.log': 'file', 'notes.txt': 'file' }, ['2026-11-01.log', '2026-11-02.log']],
    ['a link to a file elsewhere is read', { '2026-11-01.log': 'file', '2026-11-02.log': 'link:../outside.log' }, ['2026-11-01.log', '2026-11-02.log']],
    ['a link to another day here is not read twice', { '2026-11-01.log': 'file', '2026-11-02.log': 'link:2026-11-01.log' }, ['2026-11-01.log']],
    ['two links to one file elsewhere: the first by name', { '2026-11-03.log': 'link:../outside.log', '2026-11-02.log': 'link:../outside.log' }, ['2026-11-02.log']],
    ['a dangling link and a folder are not days', { '2026-11-01.log': 'link:gone.log', '2026-11-02.log': 'dir', '2026-11-03.log': 'file' }, ['2026-11-03.log']],
  ])('%s', async (_case, layout, names) => {
    expect(await listed(layout)).toEqual(names);
  });
});

describe('listLogFiles / requireDaysInReach: a day linked to no file is out of reach, not gone', () => {
  it.each<[string, Record<string, string>, string[], RegExp | null]>([
    ['files and a link to a file: none missed', { '2026-11-01.log': 'file', '2026-11-02.log': 'link:../outside.log' }, [], null],
    ['a second link to one file is no miss', { '2026-11-01.log': 'file', '2026-11-02.log': 'link:2026-11-01.log' }, [], null],
    ['a dangling link', { '2026-11-01.log': 'link:../gone.log', '2026-11-02.log': 'file' }, ['2026-11-01.log'], /^.*\/logs\/2026-11-01\.log is a link to .*\/gone\.log, which does not exist: put the file back there \(mount its disk\), or remove the link; nothing done$/],
    ['a link to a folder is no day, not one out of reach', { '2026-11-01.log': 'link:..', '2026-11-02.log': 'file' }, [], null],
    ['a link under a file', { '2026-11-01.log': 'link:../outside.log/x', '2026-11-02.log': 'file' }, ['2026-11-01.log'], /2026-11-01\.log is a link to .*\/outside\.log\/x, which does not exist/],
    ['two dangling links: the first named, the other counted', { '2026-11-01.log': 'link:a', '2026-11-03.log': 'link:b' }, ['2026-11-01.log', '2026-11-03.log'], /2026-11-01\.log is a link to .*\/a, which does not exist: put the file back there \(mount its disk\), or remove the link \(and 1 more day: argo logs check lists them\); nothing done$/],
    ['a folder named as a day is no link to miss', { '2026-11-01.log': 'dir' }, [], null],
    // Reached through nothing that can be read (here a loop; a folder closed to this user, a network disk gone, alike).
    ['a link that cannot be reached', { '2026-11-01.log': 'link:2026-11-01.log', '2026-11-02.log': 'file' }, ['2026-11-01.log'], /2026-11-01\.log is a link to .*\/2026-11-01\.log, which cannot be reached \(too many symbolic links\): put the file back there \(mount its disk\), or remove the link; nothing done$/],
  ])('%s', async (_case, layout, missed, refusal) => {
    const logs = logsFolder(layout);
    const stats = new ScanStats();
    await listLogFiles(logs, stats);
    expect(stats.missedDays.map((path) => basename(path))).toEqual(missed);
    if (refusal === null) await expect(requireDaysInReach(logs, 'nothing done')).resolves.toBeUndefined();
    else await expect(requireDaysInReach(logs, 'nothing done')).rejects.toThrow(refusal);
  });

  it.each<[number, number, string | null]>([
    [0, 0, null],
    [1, 0, 'argo: skipped 1 unreadable log line; run "argo logs check" to list them\n'],
    [0, 1, 'argo: skipped 1 day\'s log file out of reach (a link to no file); run "argo logs check" to list them\n'],
    [2, 3, 'argo: skipped 2 unreadable log lines and 3 days\' log files out of reach (links to no file); run "argo logs check" to list them\n'],
  ])('notice: %i unreadable lines, %i days out of reach', (lines, days, notice) => {
    const stats = new ScanStats();
    for (let n = 0; n < lines; n++) stats.skip('f.log', { number: n + 1, offset: n * 10, length: 5, text: 'x', complete: true }, 'unreadable');
    for (let n = 0; n < days; n++) {
      stats.missDay(`/logs/2026-11-0${n + 1}.log`);
      stats.missDay(`/logs/2026-11-0${n + 1}.log`);
    }
    expect(stats.notice()).toBe(notice);
  });
});

describe('appendDay: a turn never goes to a day before one already written to', () => {
  it.each<[string, Record<string, string> | null, string, string]>([
    ['no log folder yet', null, '2026-11-26', '2026-11-26'],
    ['an empty folder', {}, '2026-11-26', '2026-11-26'],
    ['the turn\'s day is the newest', { '2026-11-25.log': 'file', '2026-11-26.log': 'file' }, '2026-11-26', '2026-11-26'],
    ['a new day after the newest', { '2026-11-25.log': 'file' }, '2026-11-26', '2026-11-26'],
    ['a later day exists: the turn goes there', { '2026-11-26.log': 'file', '2026-11-27.log': 'file' }, '2026-11-26', '2026-11-27'],
    ['the newest of several later days', { '2026-11-27.log': 'file', '2026-11-28.log': 'file' }, '2026-11-26', '2026-11-28'],
    ['an empty later file counts', { '2026-11-28.log': 'file' }, '2026-11-26', '2026-11-28'],
    ['two days ahead is the reach (zones are at most two local days apart)', { '2026-11-28.log': 'file', '2026-11-29.log': 'file' }, '2026-11-26', '2026-11-28'],
    ['a file dated further ahead (a clock once set wrong) takes no turn', { '2030-01-01.log': 'file' }, '2026-11-26', '2026-11-26'],
    ['across a month and a year end', { '2026-01-01.log': 'file' }, '2025-12-31', '2026-01-01'],
    ['across February\'s end in a leap year', { '2028-03-01.log': 'file' }, '2028-02-28', '2028-03-01'],
    ['files not named as a day do not count', { '2026-11-25.log': 'file', '2026-11-27.txt': 'file', 'notes': 'file', '2026-11-27.log.tmp': 'file', '.verified.json': 'file' }, '2026-11-26', '2026-11-26'],
    ['a later day that is a folder does not count', { '2026-11-27.log': 'dir' }, '2026-11-26', '2026-11-26'],
    ['a later day that is a link does not count (never written through)', { '2026-11-25.log': 'file', '2026-11-27.log': 'link:2026-11-25.log', '2026-11-28.log': 'link:../outside.log' }, '2026-11-26', '2026-11-26'],
    ['a later dangling link does not count', { '2026-11-27.log': 'link:gone.log' }, '2026-11-26', '2026-11-26'],
    ['a link past a later file: the file', { '2026-11-27.log': 'file', '2026-11-28.log': 'link:2026-11-27.log' }, '2026-11-26', '2026-11-27'],
    ['the turn\'s own day a folder, a later file: the file', { '2026-11-26.log': 'dir', '2026-11-27.log': 'file' }, '2026-11-26', '2026-11-27'],
  ])('%s', async (_case, layout, turnDay, day) => {
    const logs = layout === null ? join(logsFolder({}), 'missing') : logsFolder(layout);
    expect(await appendDay(logs, turnDay)).toBe(day);
  });
});

describe('folderTrouble / listLogFiles: a logs/ that is there but no folder is never an empty log', () => {
  /** Makes `logs` in a fresh home as `what` says; returns its path. */
  function logsAs(what: 'folder' | 'missing' | 'file' | 'dangling link' | 'link to a file' | 'link to a folder' | 'under a file'): string {
    const home = mkdtempSync(join(tmpdir(), 'argo-logs-'));
    const logs = join(home, 'logs');
    if (what === 'folder') mkdirSync(logs);
    if (what === 'file') writeFileSync(logs, 'x');
    if (what === 'dangling link') symlinkSync(join(home, 'gone'), logs);
    if (what === 'link to a file') {
      writeFileSync(join(home, 'plain'), 'x');
      symlinkSync(join(home, 'plain'), logs);
    }
    if (what === 'link to a folder') {
      mkdirSync(join(home, 'disk'));
      symlinkSync(join(home, 'disk'), logs);
    }
    if (what === 'under a file') {
      writeFileSync(join(home, 'file'), 'x');
      return join(home, 'file', 'logs');
    }
    return logs;
  }

  it.each<[Parameters<typeof logsAs>[0], RegExp | null]>([
    ['folder', null],
    ['missing', null],
    ['link to a folder', null],
    ['file', /\/logs is a file, not a folder; Argo keeps its data in folders \(move it out of the way\)$/],
    ['dangling link', /\/logs is a link to .*\/gone, which does not exist: put the folder back there \(mount its disk\), or remove the link$/],
    ['link to a file', /\/logs is a link to .*\/plain, which is a file, not a folder: point the link at a folder, or remove it$/],
    ['under a file', /\/logs cannot be a folder: .*\/file or a folder above it is not one/],
  ])('%s', async (what, trouble) => {
    const logs = logsAs(what);
    const said = await folderTrouble(logs);
    if (trouble === null) {
      expect(said).toBeNull();
      expect(await listLogFiles(logs)).toEqual([]);
    } else {
      expect(said).toMatch(trouble);
      await expect(listLogFiles(logs)).rejects.toThrow(NotAFolderError);
      await expect(unwritableLogNames(logs)).rejects.toThrow(said ?? '');
    }
  });
});
