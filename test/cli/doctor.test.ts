import { describe, expect, it } from 'vitest';
import { failureLine, missingFeaturesLine, unfinishedReport } from '../../src/cli/doctor.js';
import type { DoctorCheck } from '../../src/cli/doctor.js';
import { FEATURES } from '../../src/ollama/versions.js';
import type { Recovery } from '../../src/turn/recover.js';

const ok = (check: string): DoctorCheck => ({ check, ok: true, detail: `${check} is fine` });
const fail = (check: string, detail: string): DoctorCheck => ({ check, ok: false, detail });

describe('failureLine', () => {
  it.each<[DoctorCheck[], string | null]>([
    [[ok('config'), ok('data'), ok('ollama'), ok('model'), ok('endpoint')], null],
    [[], null],
    // A warning (an Ollama too old for some features) passes.
    [[ok('config'), ok('ollama'), { check: 'features', ok: true, warning: true, detail: 'Ollama 0.8.0 is too old for --think (0.9.0)' }], null],
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

describe('unfinishedReport: the journal of unfinished turns in doctor', () => {
  const none: Recovery = { recovered: [], alreadyLogged: [], rescued: [], inProgress: [], elsewhere: [], problems: [] };
  it.each<[string, Partial<Recovery>, { ok: boolean; detail: string }]>([
    ['nothing there', {}, { ok: true, detail: 'no turn left unfinished' }],
    ['a live argo answering', { inProgress: [{ id: 'a', pid: 41 }, { id: 'b', pid: 41 }, { id: 'c', pid: 7 }] }, { ok: true, detail: '3 turns in progress (argo pid 41, 7)' }],
    ['logged now for a dead argo', { recovered: ['a'] }, { ok: true, detail: 'logged 1 turn an earlier argo left unfinished (killed or crashed) now: argo logs --status interrupted' }],
    ['in the log already', { alreadyLogged: ['a', 'b'] }, { ok: true, detail: 'removed 2 files of turns logged already' }],
    ['saved to rescued/', { rescued: [{ id: 'a', file: '/h/rescued/u1.ndjson' }] }, { ok: true, detail: '1 turn an earlier argo left unfinished is saved in /h/rescued/u1.ndjson, not in the log: add it back as docs/troubleshooting.md says' }],
    ['two saved to rescued/', { rescued: [{ id: 'a', file: '/h/rescued/u1.ndjson' }, { id: 'b', file: '/h/rescued/u2.ndjson' }] }, { ok: true, detail: '2 turns an earlier argo left unfinished are saved in /h/rescued/u1.ndjson, /h/rescued/u2.ndjson, not in the log: add them back as docs/troubleshooting.md says' }],
    ['another host', { elsewhere: [{ id: 'a', host: 'far' }] }, { ok: true, detail: '1 turn of argo on far, left to that host' }],
    [
      'another machine with this host name',
      { elsewhere: [{ id: 'a', host: 'ubuntu', machine: '22222222222222222222222222222222' }, { id: 'b', host: 'ubuntu', machine: '22222222222222222222222222222222' }] },
      { ok: true, detail: '2 turns of argo on ubuntu (machine id 22222222…), left to that host' },
    ],
    [
      'another container on this machine (its pid namespace)',
      { elsewhere: [{ id: 'a', host: 'box', container: 'pid:[4026532001]' }, { id: 'b', host: 'far' }] },
      { ok: true, detail: '1 turn of argo on far, left to that host; 1 turn of argo in another container on this machine (pid:[4026532001]), left to it' },
    ],
    ['in progress and logged now', { inProgress: [{ id: 'a', pid: 9 }], recovered: ['b'] }, { ok: true, detail: '1 turn in progress (argo pid 9); logged 1 turn an earlier argo left unfinished (killed or crashed) now: argo logs --status interrupted' }],
    [
      'a damaged file: why, and what to do',
      { recovered: ['b'], problems: [{ file: '/h/unfinished/x.json', problem: 'not JSON (Unexpected end of JSON input)' }, { file: '/h/unfinished/y.json', problem: 'p' }] },
      { ok: false, detail: '/h/unfinished/x.json: not JSON (Unexpected end of JSON input) (and 1 more file); move such a file out of /h/unfinished once you have kept what you need from it' },
    ],
    [
      'the folder cannot be read (a data home of another user): its permissions, not a file to move',
      { problems: [{ file: '/h/unfinished', problem: "cannot be read (EACCES: permission denied, scandir '/h/unfinished')", folder: true }] },
      { ok: false, detail: "/h/unfinished cannot be read (EACCES: permission denied, scandir '/h/unfinished'); check its permissions (the data home is ARGO_HOME or --home)" },
    ],
  ])('%s', (_case, found, report) => {
    expect(unfinishedReport({ ...none, ...found }, '/h/unfinished')).toEqual(report);
  });
});

describe('missingFeaturesLine: an Ollama too old for some of what Argo offers is a warning naming each', () => {
  const UPGRADE = '; upgrade Ollama to use them (docs/troubleshooting.md, "Ollama versions")';
  it.each<[Parameters<typeof missingFeaturesLine>[0], string | null]>([
    [[0, 32, 15], null],
    [[0, 22, 0], null],
    // A build from source (0.0.0) or a version that is no release number: nothing can be told.
    [null, null],
    [[0, 21, 0], `Ollama 0.21.0 is too old for --think max (0.22.0)${UPGRADE}`],
    [[0, 12, 11], `Ollama 0.12.11 is too old for --think levels for models other than gpt-oss (0.17.7), --think max (0.22.0)${UPGRADE}`],
    // Log probabilities came in 0.12.11: argo serve refuses them before (ollama_too_old).
    [[0, 12, 10], `Ollama 0.12.10 is too old for argo serve's log probabilities (logprobs) (0.12.11), --think levels for models other than gpt-oss (0.17.7), --think max (0.22.0)${UPGRADE}`],
    [[0, 12, 0], `Ollama 0.12.0 is too old for argo serve's log probabilities (logprobs) (0.12.11), --think levels for models other than gpt-oss (0.17.7), --think max (0.22.0)${UPGRADE}`],
    [
      [0, 8, 0],
      `Ollama 0.8.0 is too old for --think (0.9.0), --think low/medium/high (0.11.0), argo serve's log probabilities (logprobs) (0.12.11), --think levels for models other than gpt-oss (0.17.7), --think max (0.22.0)${UPGRADE}`,
    ],
    [
      [0, 6, 3],
      `Ollama 0.6.3 is too old for checking a model's capabilities (0.6.4), a 4096-token default window (0.6.7), --think (0.9.0), --think low/medium/high (0.11.0), argo serve's log probabilities (logprobs) (0.12.11), --think levels for models other than gpt-oss (0.17.7), --think max (0.22.0)${UPGRADE}`,
    ],
    [
      [0, 2, 5],
      `Ollama 0.2.5 is too old for agent runs and client tools (0.2.6), streamed agent rounds (0.4.6), argo serve's JSON schema response_format (0.5.0), checking a model's capabilities (0.6.4), a 4096-token default window (0.6.7), --think (0.9.0), --think low/medium/high (0.11.0), argo serve's log probabilities (logprobs) (0.12.11), --think levels for models other than gpt-oss (0.17.7), --think max (0.22.0)${UPGRADE}`,
    ],
  ])('%j → %j', (version, line) => {
    expect(missingFeaturesLine(version)).toBe(line);
  });

  it('names every feature Argo asks the version for, each with its release, oldest first', () => {
    const releases = [...(missingFeaturesLine([0, 1, 0]) ?? '').matchAll(/\((\d+\.\d+\.\d+)\)/g)].map((match) => match[1]);
    const oldestFirst = Object.values(FEATURES).map((feature) => feature.since).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
    expect(releases).toEqual(oldestFirst);
  });
});
