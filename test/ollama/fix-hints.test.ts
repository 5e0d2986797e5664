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

  it('a chat names its start-up flags as such: typed in the chat, they would be a message to the model', () => {
    const said = [CHAT_HINTS.host, CHAT_HINTS.api?.('generate') ?? '', CHAT_HINTS.noThinking, ...Object.values(CHAT_HINTS.tooOld)];
    for (const hint of said) if (hint.includes('--')) expect(hint).toMatch(/start argo chat again|read as argo chat starts/);
    expect(CHAT_HINTS.noThinking).toBe('start argo chat again with --think off (or remove "think" from config.json)');
    expect(CHAT_HINTS.api?.('generate')).toBe('start argo chat again with --api generate, or choose another model with /model if this one does neither (an embedding model)');
    // What the command line says keeps its own words.
    expect(CLI_HINTS.noThinking).toBe('ask with --think off (or remove "think" from config.json)');
  });
});
