import { describe, expect, it } from 'vitest';
import { fullModelName, fullModelPath, isOllamaModelName, namesTag } from '../../src/ollama/model-name.js';

describe('model names as Ollama reads them', () => {
  it.each<[string, string, string, boolean]>([
    ['argo', 'registry.ollama.ai/library/argo:latest', 'registry.ollama.ai/library/argo', false],
    ['ARGO:7B', 'registry.ollama.ai/library/argo:7b', 'registry.ollama.ai/library/argo', true],
    ['library/llama3:8b', 'registry.ollama.ai/library/llama3:8b', 'registry.ollama.ai/library/llama3', true],
    ['team/x', 'registry.ollama.ai/team/x:latest', 'registry.ollama.ai/team/x', false],
    ['registry:5000/team/x', 'registry:5000/team/x:latest', 'registry:5000/team/x', false],
    ['https://registry:5000/team/x:1', 'registry:5000/team/x:1', 'registry:5000/team/x', true],
    ['argo@sha256:0123', 'registry.ollama.ai/library/argo:latest', 'registry.ollama.ai/library/argo', false],
    [' argo:7b ', 'registry.ollama.ai/library/argo:7b', 'registry.ollama.ai/library/argo', true],
  ])('%j → %s, model %s, tag given %s', (name, full, path, tagged) => {
    expect(fullModelName(name)).toBe(full);
    expect(fullModelPath(name)).toBe(path);
    expect(namesTag(name)).toBe(tagged);
  });
});

describe('names Ollama takes (types/model ParseName and IsValid, a source suffix left out; blanks at the ends refused, as earlier Ollama refuses them)', () => {
  it.each<[string, boolean]>([
    ['argo', true],
    ['argo:latest', true],
    ['llama3.2:3b-instruct-q4_K_M', true],
    ['team/coder:1.5b', true],
    ['registry.ollama.ai/library/argo:latest', true],
    ['registry:5000/team/x:1', true],
    ['https://registry:5000/team/x:1', true],
    ['_private', true],
    ['gpt-oss:120b-cloud', true],
    ['argo:cloud', true],
    [' argo', false],
    ['argo ', false],
    ['argo\t', false],
    ['m'.repeat(80), true],
    ['m'.repeat(81), false],
    ['', false],
    ['   ', false],
    ['argo/', false],
    ['/argo', false],
    ['argo:', false],
    [':latest', false],
    ['a b', false],
    ['Argo!', false],
    ['-argo', false],
    ['argo:-x', false],
    ['argo:a:b', false],
    ['team.x/argo', false],
    ['a/b/c/d', false],
    ['//argo', false],
    ['argo@sha256:0123', false],
    ['argo:cloud:local', false],
    ['modèle', false],
  ])('%j → %s', (name, taken) => {
    expect(isOllamaModelName(name)).toBe(taken);
  });
});
