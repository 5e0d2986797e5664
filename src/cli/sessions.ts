import type { Command } from 'commander';
import { loadSettings } from '../config/settings.js';
import type { FlagOverrides } from '../config/settings.js';
import { listSessions } from '../sessions/store.js';
import type { Io } from './io.js';

export function registerSessions(program: Command, io: Io): void {
  program
    .command('sessions')
    .description('list sessions (name, id, title, turns, created, last used)')
    .option('--json', 'print a JSON array')
    .option('--home <dir>', 'data directory')
    .action(async (flags: FlagOverrides & { json?: boolean }) => {
      const settings = loadSettings(flags, process.env);
      const sessions = await listSessions(settings.paths.sessions);
      if (flags.json) {
        io.stdout.write(`${JSON.stringify(sessions)}\n`);
        return;
      }
      if (sessions.length === 0) {
        io.stdout.write('no sessions yet; start one with: argo --session NAME "your question"\n');
        return;
      }
      for (const s of sessions) {
        io.stdout.write(`${s.name.padEnd(20)} ${String(s.turns).padStart(5)} turns  last ${s.last_used_at}  ${s.title}\n`);
      }
    });
}
