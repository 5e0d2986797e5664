// The installed models as /api/tags lists them: Ollama's list is never null and names every model;
// a list of another shape is not Ollama's answer, and an entry without a name is left out, where the
// list is read, so no caller (doctor, argo serve's /v1/models, a missing model's suggestion) checks it.
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_HINTS, installedNames } from '../../src/ollama/fix-hints.js';
import { OllamaTransport, questionFailure } from '../../src/ollama/transport.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';

const ollama = await fakeOllamaPerFile();
const H = ollama.url;
afterEach(() => {
  ollama.options.tagsBody = undefined;
});

function transport(): OllamaTransport {
  return new OllamaTransport({ host: H, attempts: 1, initialDelayMs: 1, idleMs: 2000 });
}

describe('the installed models, as /api/tags lists them', () => {
  const NOT_A_LIST = `something at ${H} answered, but not as Ollama does (its model list is not a list of names); check that --host / OLLAMA_HOST points at Ollama`;
  it.each<[string, string, string[] | null]>([
    ['no list', '{}', null],
    ['a list that is null', '{"models":null}', null],
    ['a list that is an object', '{"models":{"name":"argo:latest"}}', null],
    ['an answer that is a list', '[]', null],
    ['an empty list', '{"models":[]}', []],
    ['entries without a name are left out', '{"models":[{"model":"argo:latest"},{"name":"b:latest"},{"name":7},null,"c",{"name":""},{"name":"a:latest"}]}', ['a:latest', 'b:latest']],
  ])('%s', async (_case, body, names) => {
    ollama.options.tagsBody = body;
    const t = transport();
    if (names === null) {
      const error = await t.installedModels().then(() => null, (thrown: unknown) => thrown);
      expect(questionFailure(H, error, CLI_HINTS, 2000)).toBe(NOT_A_LIST);
    } else {
      await expect(t.installedModels()).resolves.toEqual(names);
    }
  });

  it('listedModels keeps each model\'s modified_at, as a string', async () => {
    ollama.options.tagsBody = '{"models":[{"name":"b:latest","modified_at":"2026-01-15T09:30:00Z"},{"name":"a:latest"},{"model":"c"}]}';
    await expect(transport().listedModels()).resolves.toEqual([
      { name: 'b:latest', modified_at: '2026-01-15T09:30:00Z' },
      { name: 'a:latest', modified_at: '' },
    ]);
  });
});

describe('a model list past what a whole answer may be', () => {
  it('is read no further than 32 MiB and refused, not held whole', async () => {
    const entry = '{"name":"model-with-a-rather-long-name-to-fill-the-list:latest"},';
    ollama.options.tagsBody = `{"models":[${entry.repeat(Math.ceil((33 * 1024 * 1024) / entry.length))}{"name":"last:latest"}]}`;
    const error = await transport().installedModels().then(() => null, (thrown: unknown) => thrown);
    expect(questionFailure(H, error, CLI_HINTS, 2000)).toBe(`something at ${H} answered, but not as Ollama does (its answer is longer than 32 MiB); check that --host / OLLAMA_HOST points at Ollama`);
  });
});

describe('installedNames: a line names the first 20 installed models, then how many more', () => {
  const names = (count: number): string[] => Array.from({ length: count }, (_, index) => `m${index + 1}`);
  it.each<[number, string]>([
    [0, ''],
    [1, 'm1'],
    [20, names(20).join(', ')],
    [21, `${names(20).join(', ')}, and 1 more (ollama list)`],
    [1000, `${names(20).join(', ')}, and 980 more (ollama list)`],
  ])('%d models → %s', (count, line) => {
    expect(installedNames(names(count))).toBe(line);
  });
});
