import type { Command } from 'commander';
import { loadSettings } from '../config/settings.js';
import type { FlagOverrides } from '../config/settings.js';
import { listLogFiles } from '../log/files.js';
import { ScanStats, scanEntries } from '../log/scan.js';
import type { Io } from './io.js';

export function registerLogs(program: Command, io: Io, setExitCode: (code: number) => void): void {
  program
    .command('logs')
    .description('show logged turns')
    .option('--json', 'NDJSON exactly as stored')
    .option('--session <name>', 'only this session')
    .option('--type <type>', 'only this entry type')
    .option('--path', 'print the logs directory')
    .option('--home <dir>', 'data directory')
    .action(async (flags: FlagOverrides & { json?: boolean; type?: string; path?: boolean }) => {
      const settings = loadSettings(flags, process.env);
      if (flags.path) {
        io.stdout.write(`${settings.paths.logs}\n`);
        return;
      }
      const stats = new ScanStats();
      for await (const { entry, line } of scanEntries(await listLogFiles(settings.paths.logs), stats)) {
        if (flags.session && entry.session !== flags.session) continue;
        if (flags.type && entry.entry_type !== flags.type) continue;
        io.stdout.write(flags.json ? `${line.text}\n` : `${entry.timestamp}  ${entry.session}  ${entry.entry_type}  ${entry.user_prompt.slice(0, 60)}\n`);
      }
      if (stats.unreadable > 0) io.stderr.write(`argo: skipped ${stats.unreadable} unreadable log lines (see argo logs check)\n`);
      setExitCode(0);
    });
}
