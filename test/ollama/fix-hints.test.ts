import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHAT_HINTS, CLI_HINTS, MODELFILE, SERVER_HINTS, howToGetModel, orInstalledModel } from '../../src/ollama/fix-hints.js';
import type { FixHints } from '../../src/ollama/fix-hints.js';
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

describe('orInstalledModel: the way out of a missing model, in the words of where the user is', () => {
  it.each<[string, FixHints, string | undefined, string]>([
    ['a command line', CLI_HINTS, 'argo:latest', ', or use an installed one (--model argo:latest)'],
    ['a command line, nothing to suggest', CLI_HINTS, undefined, ', or choose another with --model'],
    // In a chat, what the user can type there and then (whether the chat started with --model or not).
    ['a chat', CHAT_HINTS, 'argo:latest', ', or use an installed one (/model argo:latest)'],
    ['a chat, nothing to suggest', CHAT_HINTS, undefined, ', or choose another with /model'],
    ['a server', SERVER_HINTS, 'argo:latest', ', or use an installed one ("model": "argo:latest")'],
  ])('%s', (_where, hints, suggested, text) => {
    expect(orInstalledModel(hints, suggested)).toBe(text);
  });

  it('a chat changes only the model hint: the rest is set as argo starts, as on the command line', () => {
    expect({ ...CHAT_HINTS, model: null }).toEqual({ ...CLI_HINTS, model: null });
  });
});
