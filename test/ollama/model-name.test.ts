import { describe, expect, it } from 'vitest';
import { fullModelName, fullModelPath, namesTag } from '../../src/ollama/model-name.js';

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
