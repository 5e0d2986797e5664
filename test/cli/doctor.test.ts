import { describe, expect, it } from 'vitest';
import { failureLine } from '../../src/cli/doctor.js';
import type { DoctorCheck } from '../../src/cli/doctor.js';

const ok = (check: string): DoctorCheck => ({ check, ok: true, detail: `${check} is fine` });
const fail = (check: string, detail: string): DoctorCheck => ({ check, ok: false, detail });

describe('failureLine', () => {
  it.each<[DoctorCheck[], string | null]>([
    [[ok('config'), ok('data'), ok('ollama'), ok('model'), ok('endpoint')], null],
    [[], null],
    [[fail('config', '/h/config.json: unknown key "modle"')], 'doctor: the config check failed: /h/config.json: unknown key "modle"'],
    [
      [ok('config'), ok('data'), fail('ollama', 'cannot reach Ollama at http://127.0.0.1:11434 (connection refused); start it with "ollama serve"')],
      'doctor: the ollama check failed: cannot reach Ollama at http://127.0.0.1:11434 (connection refused); start it with "ollama serve"',
    ],
    // Every failed check is named; the first one's detail (and fix) is given, as it often causes the rest.
    [
      [ok('config'), fail('data', '/h is not writable; choose another with --home'), ok('ollama'), fail('model', 'x is not installed; pull it')],
      'doctor: 2 checks failed (data, model); data: /h is not writable; choose another with --home',
    ],
    [
      [fail('data', 'd'), fail('model', 'm'), fail('endpoint', 'e')],
      'doctor: 3 checks failed (data, model, endpoint); data: d',
    ],
  ])('%j → %j', (checks, line) => {
    expect(failureLine(checks)).toBe(line);
  });
});
