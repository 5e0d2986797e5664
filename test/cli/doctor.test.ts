import { describe, expect, it } from 'vitest';
import { MODELFILE } from '../../src/ollama/fix-hints.js';
import { dataReport, doctorAskMs, rescuedReport, endpointReport, failureLine, missingFeaturesLine, reportLines, unfinishedReport } from '../../src/cli/doctor.js';
import type { DoctorCheck } from '../../src/cli/doctor.js';
import { RuntimeError } from '../../src/errors.js';
import { NotRegularFileError, SymlinkRefusedError, UnwritableFileError } from '../../src/log/fs.js';
import type { DataHomeCheck } from '../../src/turn/data-home.js';
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

describe('dataReport: the data check names each place a turn cannot use, and what to do', () => {
  const failed = (code: string, call: string, path: string): Error => Object.assign(new Error(`${code}: ${call} '${path}'`), { code, path });
  const denied = (path: string, call = 'access'): Error => failed('EACCES', call, path);
  const PERMISSIONS = 'check the path and its permissions (the data home is ARGO_HOME or --home)';
  it.each<[string, DataHomeCheck, { ok: boolean; detail: string }]>([
    ['all usable', { files: [], home: null, folders: [] }, { ok: true, detail: '/h is writable' }],
    [
      'a home that cannot be written, whose locks/ and unfinished/ cannot be made: said with the home',
      {
        files: [],
        home: { path: '/h', cannot: 'write', error: denied('/h') },
        folders: [
          { path: '/h/locks', cannot: 'make', error: denied('/h/locks', 'mkdir') },
          { path: '/h/unfinished', cannot: 'make', error: denied('/h/unfinished', 'mkdir') },
        ],
      },
      { ok: false, detail: `/h is not writable (permission denied): locks/, unfinished/ cannot be made in it, nor the memo or chat history saved; ${PERMISSIONS}` },
    ],
    [
      'a home that cannot be written, its folders all there',
      { files: [], home: { path: '/h', cannot: 'write', error: denied('/h') }, folders: [] },
      { ok: false, detail: `/h is not writable (permission denied): the memo and chat history cannot be saved in it; ${PERMISSIONS}` },
    ],
    [
      'a folder that is there but cannot be written (a logs/ made read-only)',
      { files: [], home: null, folders: [{ path: '/h/logs', cannot: 'write', error: denied('/h/logs') }] },
      { ok: false, detail: `/h/logs is not writable (permission denied); ${PERMISSIONS}` },
    ],
    [
      'a home that cannot be written and a folder that cannot either: each named',
      { files: [], home: { path: '/h', cannot: 'write', error: denied('/h') }, folders: [{ path: '/h/sessions', cannot: 'write', error: denied('/h/sessions') }] },
      { ok: false, detail: `/h is not writable (permission denied): the memo and chat history cannot be saved in it; /h/sessions is not writable (permission denied); ${PERMISSIONS}` },
    ],
    [
      'a home that cannot be made',
      { files: [], home: { path: '/ro/h', cannot: 'make', error: failed('EROFS', 'mkdir', '/ro/h') }, folders: [] },
      { ok: false, detail: '/ro/h cannot be made (the file system is read-only); use a folder on a writable one (the data home is ARGO_HOME or --home)' },
    ],
    [
      'a folder that cannot be made for another reason than the home\'s: named on its own',
      { files: [], home: { path: '/h', cannot: 'write', error: denied('/h') }, folders: [{ path: '/h/locks', cannot: 'make', error: failed('ENOSPC', 'mkdir', '/h/locks') }] },
      { ok: false, detail: `/h is not writable (permission denied): the memo and chat history cannot be saved in it; /h/locks cannot be made (no space left on the device); ${PERMISSIONS}` },
    ],
    [
      "Argo's own refusal (a file where the folder goes) names its own fix",
      { files: [], home: null, folders: [{ path: '/h/logs', cannot: 'make', error: new RuntimeError('/h/logs is not a folder; Argo keeps its data in folders (set ARGO_HOME or --home to one)') }] },
      { ok: false, detail: '/h/logs is not a folder; Argo keeps its data in folders (set ARGO_HOME or --home to one)' },
    ],
    [
      "Argo's refusal and a system error: the system error's fix",
      {
        files: [],
        home: null,
        folders: [
          { path: '/h/unfinished', cannot: 'make', error: new RuntimeError('/h/unfinished is a symbolic link; Argo does not follow links in its data home (remove the link and try again)') },
          { path: '/h/locks', cannot: 'write', error: failed('EROFS', 'access', '/h/locks') },
        ],
      },
      {
        ok: false,
        detail:
          '/h/unfinished is a symbolic link; Argo does not follow links in its data home (remove the link and try again); /h/locks is not writable (the file system is read-only); use a folder on a writable one (the data home is ARGO_HOME or --home)',
      },
    ],
    [
      "the day's log made read-only: the file and its fix are named, not the folder",
      {
        home: null,
        folders: [],
        files: [{ path: '/h/logs/2026-11-23.log', cannot: 'write', error: new UnwritableFileError('/h/logs/2026-11-23.log', 'permission denied', 'make it writable (chmod 600 /h/logs/2026-11-23.log)') }],
      },
      { ok: false, detail: '/h/logs/2026-11-23.log cannot be written (permission denied); make it writable (chmod 600 /h/logs/2026-11-23.log)' },
    ],
    [
      'a folder where chat_history goes: the line a chat refuses to start with',
      { home: null, folders: [], files: [{ path: '/h/chat_history', cannot: 'read', error: new NotRegularFileError('/h/chat_history', 'a folder') }] },
      { ok: false, detail: '/h/chat_history is not a file (a folder); move it out of the way' },
    ],
    [
      'a chat_history that cannot be read',
      { home: null, folders: [], files: [{ path: '/h/chat_history', cannot: 'read', error: denied('/h/chat_history', 'open') }] },
      { ok: false, detail: `/h/chat_history cannot be read (permission denied); ${PERMISSIONS}` },
    ],
    [
      'a folder and a file: each named, the folder first',
      {
        home: null,
        folders: [{ path: '/h/sessions', cannot: 'write', error: denied('/h/sessions') }],
        files: [{ path: '/h/chat_history', cannot: 'read', error: new SymlinkRefusedError('/h/chat_history') }],
      },
      {
        ok: false,
        detail: `/h/sessions is not writable (permission denied); /h/chat_history is a symbolic link; Argo does not follow links in its data home (remove the link and try again); ${PERMISSIONS}`,
      },
    ],
    [
      'an error of no known code: its message, and another home as the way out',
      { files: [], home: null, folders: [{ path: '/h/logs', cannot: 'make', error: new Error('odd') }] },
      { ok: false, detail: '/h/logs cannot be made (odd); choose another with --home or ARGO_HOME' },
    ],
  ])('%s', (_case, check, report) => {
    expect(dataReport(check, '/h')).toEqual(report);
  });
});

describe('rescuedReport: files of turns the log could not take, and how to add them back', () => {
  it.each([
    [1, '1 file in /h/rescued holds a turn the log could not take: add it back to the log as docs/troubleshooting.md says ("cannot write the log"), then remove it'],
    [3, '3 files in /h/rescued hold turns the log could not take: add them back to the log as docs/troubleshooting.md says ("cannot write the log"), then remove them'],
  ])('%i → %j', (count, line) => {
    expect(rescuedReport(count, '/h/rescued')).toBe(line);
  });
});

describe('doctorAskMs: the wait for the model list and details', () => {
  it.each([
    [120_000, 10_000],
    [300_000, 10_000],
    [10_000, 10_000],
    [2000, 2000],
    [300, 300],
  ])('timeouts.idleMs %i → %i ms', (idleMs, expected) => {
    expect(doctorAskMs(idleMs)).toBe(expected);
  });
});

describe('endpointReport: whether the model can answer on the endpoint', () => {
  const SHOW_FAILED = 'Ollama at http://h:11434 answered HTTP 500: show exploded';
  it.each<[string, string, Parameters<typeof endpointReport>[2], { ok: boolean; detail: string }]>([
    ['chat', 'argo', ['completion', 'tools'], { ok: true, detail: '/api/chat (model capabilities: completion, tools)' }],
    ['generate', 'argo', ['completion'], { ok: true, detail: '/api/generate (model capabilities: completion)' }],
    // An Ollama before 0.6.4 lists none: nothing can be told, so it passes.
    ['chat', 'argo', [], { ok: true, detail: '/api/chat (model capabilities: unknown)' }],
    ['chat', 'minilm', ['embedding'], { ok: false, detail: '/api/chat needs the "completion" capability, which minilm does not have (model capabilities: embedding); choose another model with --model' }],
    [
      'chat',
      'argo',
      { failure: SHOW_FAILED },
      { ok: false, detail: `/api/chat cannot be checked: the capabilities of argo are unknown, as /api/show failed (${SHOW_FAILED}); "ollama show argo" says why, and if it fails there too, create it with "ollama create argo -f ${MODELFILE}" again` },
    ],
    [
      'generate',
      'llama3.2',
      { failure: SHOW_FAILED },
      { ok: false, detail: `/api/generate cannot be checked: the capabilities of llama3.2 are unknown, as /api/show failed (${SHOW_FAILED}); "ollama show llama3.2" says why, and if it fails there too, pull it with "ollama pull llama3.2" again` },
    ],
  ])('/api/%s, %s, %j', (api, model, capabilities, report) => {
    expect(endpointReport(api, model, capabilities)).toEqual(report);
  });

  // With tools on, every turn is refused unless the endpoint, the model and the release can take them.
  const TOOLS = '/home/me/.argo/config.json: "tools"';
  const TOOLS_ON = `tools are on (${TOOLS}) and need`;
  it.each<[string, string, Parameters<typeof endpointReport>[2], Parameters<typeof endpointReport>[3], { ok: boolean; detail: string }]>([
    ['tools on, a model that has them', 'chat', ['completion', 'tools'], { tools: TOOLS, version: [0, 32, 15] }, { ok: true, detail: '/api/chat with tools (model capabilities: completion, tools)' }],
    [
      'tools on, a model without them',
      'chat',
      ['completion'],
      { tools: TOOLS, version: [0, 32, 15] },
      { ok: false, detail: `${TOOLS_ON} the "tools" capability, which argo does not have (model capabilities: completion); choose a model that has it with --model ("ollama show MODEL" lists its capabilities), or remove "tools" from config.json` },
    ],
    ['tools off, a model without them', 'chat', ['completion'], { tools: null, version: [0, 32, 15] }, { ok: true, detail: '/api/chat (model capabilities: completion)' }],
    // Before 0.6.4 no capabilities are listed: nothing to tell from them.
    ['tools on, capabilities not listed', 'chat', [], { tools: TOOLS, version: [0, 5, 0] }, { ok: true, detail: '/api/chat with tools (model capabilities: unknown)' }],
    [
      'tools on, /api/generate',
      'generate',
      ['completion', 'tools'],
      { tools: TOOLS, version: [0, 32, 15] },
      { ok: false, detail: `${TOOLS_ON} /api/chat, not /api/generate: drop --api generate (or "api" in config.json), or remove "tools" from config.json` },
    ],
    ['tools on, Ollama before tool calls', 'chat', [], { tools: TOOLS, version: [0, 2, 5] }, { ok: false, detail: `${TOOLS_ON} Ollama 0.2.6 or newer, and this is 0.2.5; upgrade Ollama, or remove "tools" from config.json` }],
    ['tools on, a release not known (a build from source)', 'chat', ['completion', 'tools'], { tools: TOOLS, version: null }, { ok: true, detail: '/api/chat with tools (model capabilities: completion, tools)' }],
    // /api/chat came in 0.1.14; /api/generate is older.
    [
      'Ollama before /api/chat',
      'chat',
      [],
      { tools: null, version: [0, 1, 13] },
      { ok: false, detail: '/api/chat needs Ollama 0.1.14 or newer, and this is 0.1.13; upgrade Ollama, or ask with --api generate (docs/troubleshooting.md, "Ollama versions")' },
    ],
    [
      'Ollama before /api/chat, tools on',
      'chat',
      [],
      { tools: TOOLS, version: [0, 1, 13] },
      { ok: false, detail: '/api/chat needs Ollama 0.1.14 or newer, and this is 0.1.13; upgrade Ollama (docs/troubleshooting.md, "Ollama versions")' },
    ],
    ['Ollama 0.1.14', 'chat', [], { tools: null, version: [0, 1, 14] }, { ok: true, detail: '/api/chat (model capabilities: unknown)' }],
    ['Ollama before /api/chat, /api/generate', 'generate', [], { tools: null, version: [0, 1, 13] }, { ok: true, detail: '/api/generate (model capabilities: unknown)' }],
  ])('%s', (_case, api, capabilities, needs, report) => {
    expect(endpointReport(api, 'argo', capabilities, needs)).toEqual(report);
  });
});

describe('unfinishedReport: the journal of unfinished turns in doctor', () => {
  const none: Recovery = { recovered: [], answered: [], alreadyLogged: [], rescued: [], inProgress: [], elsewhere: [], problems: [] };
  it.each<[string, Partial<Recovery>, ReturnType<typeof unfinishedReport>]>([
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
      'a damaged file: it, why, and what to do',
      { recovered: ['b'], problems: [{ file: '/h/unfinished/x.json', problem: 'not JSON (Unexpected end of JSON input)' }] },
      {
        ok: false,
        detail: '/h/unfinished/x.json: not JSON (Unexpected end of JSON input); move such a file out of /h/unfinished once you have kept what you need from it',
        files: [{ file: '/h/unfinished/x.json', problem: 'not JSON (Unexpected end of JSON input)' }],
      },
    ],
    [
      'several: how many, and what to do; each named in files',
      { recovered: ['b'], problems: [{ file: '/h/unfinished/x.json', problem: 'not JSON (Unexpected end of JSON input)' }, { file: '/h/unfinished/y.json', problem: 'cannot be logged (EACCES)' }] },
      {
        ok: false,
        detail: '2 files in /h/unfinished cannot be logged; move such a file out of /h/unfinished once you have kept what you need from it',
        files: [
          { file: '/h/unfinished/x.json', problem: 'not JSON (Unexpected end of JSON input)' },
          { file: '/h/unfinished/y.json', problem: 'cannot be logged (EACCES)' },
        ],
      },
    ],
    [
      'thousands, counted as such',
      { problems: Array.from({ length: 1234 }, (_, index) => ({ file: `/h/unfinished/f${index}.json`, problem: 'p' })) },
      {
        ok: false,
        detail: '1,234 files in /h/unfinished cannot be logged; move such a file out of /h/unfinished once you have kept what you need from it',
        files: Array.from({ length: 1234 }, (_, index) => ({ file: `/h/unfinished/f${index}.json`, problem: 'p' })),
      },
    ],
    [
      'the folder cannot be read (a data home of another user): its permissions, not a file to move',
      { problems: [{ file: '/h/unfinished', problem: "cannot be read (EACCES: permission denied, scandir '/h/unfinished')", folder: true }] },
      { ok: false, detail: "/h/unfinished cannot be read (EACCES: permission denied, scandir '/h/unfinished'); check its permissions (the data home is ARGO_HOME or --home)" },
    ],
  ])('%s', (_case, found, report) => {
    expect(unfinishedReport({ ...none, ...found }, '/h/unfinished')).toEqual(report);
  });

  it.each<[string, Partial<Recovery>]>([
    ['nothing there', {}],
    ['a turn in progress', { inProgress: [{ id: 'a', pid: 41 }] }],
  ])('a journal the data check found cannot be made or written fails, whatever is in it (%s)', (_case, found) => {
    expect(unfinishedReport({ ...none, ...found }, '/h/unfinished', false)).toEqual({
      ok: false,
      detail: '/h/unfinished cannot be used, so a turn is not kept there while it is answered and would be lost if argo were killed first; the data check says why',
    });
  });
});

describe('reportLines: a check on the text report', () => {
  const files = (count: number): { file: string; problem: string }[] => Array.from({ length: count }, (_, index) => ({ file: `/h/unfinished/f${index}.json`, problem: 'not JSON' }));
  const UNDER = ' '.repeat(17);
  it.each<[string, DoctorCheck, string[]]>([
    ['a pass', { check: 'data', ok: true, detail: '/h is writable' }, ['ok    data       /h is writable']],
    ['a warning', { check: 'features', ok: true, warning: true, detail: 'too old' }, ['warn  features   too old']],
    ['a failure', { check: 'model', ok: false, detail: 'x is not installed' }, ['FAIL  model      x is not installed']],
    ['one file: named in the detail, no line of its own', { check: 'unfinished', ok: false, detail: '/h/unfinished/f0.json: not JSON; move it', files: files(1) }, ['FAIL  unfinished /h/unfinished/f0.json: not JSON; move it']],
    [
      'several files: one line each, in line with the detail',
      { check: 'unfinished', ok: false, detail: '3 files in /h/unfinished cannot be logged', files: files(3) },
      ['FAIL  unfinished 3 files in /h/unfinished cannot be logged', ...[0, 1, 2].map((index) => `${UNDER}/h/unfinished/f${index}.json: not JSON`)],
    ],
    [
      '20 files: all of them',
      { check: 'unfinished', ok: false, detail: 'd', files: files(20) },
      ['FAIL  unfinished d', ...files(20).map(({ file }) => `${UNDER}${file}: not JSON`)],
    ],
    [
      'more than 20: the first 20, then how many more and where to see them',
      { check: 'unfinished', ok: false, detail: 'd', files: files(1254) },
      ['FAIL  unfinished d', ...files(20).map(({ file }) => `${UNDER}${file}: not JSON`), `${UNDER}… and 1,234 more: argo doctor --json lists them all`],
    ],
  ])('%s', (_case, check, lines) => {
    expect(reportLines(check)).toEqual(lines);
  });

  it('shows what came from outside through `shown`, the file lines too', () => {
    const check: DoctorCheck = { check: 'unfinished', ok: false, detail: 'd\u001b', files: [{ file: '/h/a\u001b.json', problem: 'p' }, { file: '/h/b.json', problem: 'q\u001b' }] };
    expect(reportLines(check, (text) => text.replaceAll('\u001b', '^['))).toEqual(['FAIL  unfinished d^[', `${UNDER}/h/a^[.json: p`, `${UNDER}/h/b.json: q^[`]);
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
      [0, 1, 13],
      `Ollama 0.1.13 is too old for /api/chat (argo's default --api, agent runs, argo serve) (0.1.14), agent runs and client tools (0.2.6), streamed agent rounds (0.4.6), argo serve's JSON schema response_format (0.5.0), checking a model's capabilities (0.6.4), a 4096-token default window (0.6.7), --think (0.9.0), --think low/medium/high (0.11.0), argo serve's log probabilities (logprobs) (0.12.11), --think levels for models other than gpt-oss (0.17.7), --think max (0.22.0)${UPGRADE}`,
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
