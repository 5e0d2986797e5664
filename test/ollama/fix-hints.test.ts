import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MODELFILE, howToGetModel } from '../../src/ollama/fix-hints.js';
import { shellWord } from '../../src/text/shell-word.js';

describe('howToGetModel', () => {
  it('names the installed Modelfile by its full path, so the hint works from any folder', () => {
    expect(existsSync(MODELFILE)).toBe(true);
    expect(howToGetModel('argo')).toBe(`create it with "ollama create argo -f ${shellWord(MODELFILE)}"`);
    expect(howToGetModel('argo:latest')).toBe(howToGetModel('argo'));
    expect(howToGetModel('llama3.2')).toBe('pull it with "ollama pull llama3.2"');
  });

  it.each([
    ['/usr/lib/node_modules/argo-cli/docs/Modelfile', '/usr/lib/node_modules/argo-cli/docs/Modelfile'],
    ['/home/me/My Tools/argo/docs/Modelfile', "'/home/me/My Tools/argo/docs/Modelfile'"],
    ["/home/o'brien/argo/docs/Modelfile", "'/home/o'\\''brien/argo/docs/Modelfile'"],
    ['/opt/$HOME/docs/Modelfile', "'/opt/$HOME/docs/Modelfile'"],
  ])('shellWord(%j) = %s', (path, word) => {
    expect(shellWord(path)).toBe(word);
  });
});
