// Agent runs end to end against model output no model should send: each ends with a clear outcome,
// logged with its calls.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scriptedOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const { ollama, play } = await scriptedOllamaPerFile();

describe('tool call arguments nested thousands of levels deep', () => {
  it('are an invalid response, asked again three times: invalid_response, exit 1, every call logged with a note for its arguments', async () => {
    const home = tempHome();
    const deep = JSON.parse(`{"path":"a.txt","x":${'['.repeat(4000)}${']'.repeat(4000)}}`) as Record<string, unknown>;
    play.rounds = [{ calls: [{ function: { name: 'read_file', arguments: deep } }] }];
    const result = await runArgo(['-T', 'fs', 'read a.txt'], { home, host: ollama.url });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('unexpected failure');
    expect(result.stderr.trim().split('\n').at(-1)).toBe(
      "argo: the model's tool calls were still invalid after 3 re-asks (read_file: the arguments nest arrays and objects more than 100 levels deep); try another model or fewer tools (logged as invalid_response)",
    );
    const [line] = logLines(home);
    expect(line).toMatchObject({ status: 'invalid_response', stop_reason: 'invalid_response' });
    expect(line?.tool_calls).toEqual(
      [1, 2, 3, 4].map((attempt) => ({
        id: expect.any(String) as string,
        name: 'read_file',
        arguments: '[arguments nested more than 100 levels deep: not kept]',
        outcome: 'invalid',
        round: 1,
        ...(attempt > 1 ? { attempt } : {}),
        ms: 0,
        result_chars: 0,
        error: 'read_file: the arguments nest arrays and objects more than 100 levels deep',
      })),
    );
  });
});

describe('a command tool parameter named as an Object.prototype member', () => {
  it('left out by the model is a missing parameter: needs_input, the earlier round logged, no crash', async () => {
    const root = mkdtempSync(join(tmpdir(), 'argo-e2e-root-'));
    writeFileSync(join(root, 'a.txt'), 'hello\n');
    const greet = { description: 'Greet', argv: ['echo', 'hello', '{constructor}'], sideEffects: false, parameters: { type: 'object', required: ['constructor'], properties: { constructor: { description: 'who' } } } };
    const home = tempHome({ commandTools: { greet } });
    play.rounds = [{ reply: 'first', calls: [{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }] }, { calls: [{ function: { name: 'greet', arguments: {} } }] }, { reply: 'Done.' }];
    const result = await runArgo(['-T', 'fs,greet', '--root', root, 'go'], { home, host: ollama.url });
    expect(result.stderr).not.toContain('unexpected failure');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('argo: tool greet needs "constructor", which the model did not give; ask again with it in your question (logged as needs_input)\n');
    const [line] = logLines(home);
    expect(line).toMatchObject({ status: 'needs_input', stop_reason: 'required_parameter', iterations: 1 });
    expect((line?.tool_calls as { name: string; outcome: string }[]).map(({ name, outcome }) => [name, outcome])).toEqual([['read_file', 'success'], ['greet', 'needs_input']]);
  });
});

describe('a schema pattern JavaScript would backtrack on for minutes', () => {
  it('checks the value at once: the call is invalid, asked again, and the run answers', async () => {
    const tag = { description: 'Tag a release', argv: ['echo', '{name}'], sideEffects: false, parameters: { type: 'object', required: ['name'], properties: { name: { type: 'string', pattern: '^([a-z0-9]+-?)+$' } } } };
    const home = tempHome({ commandTools: { tag } });
    play.rounds = [{ calls: [{ function: { name: 'tag', arguments: { name: `${'a'.repeat(40)}!` } } }] }, { reply: 'Done.' }];
    const result = await runArgo(['-T', 'tag', 'go'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 0, stdout: 'Done.\n' });
    const [line] = logLines(home);
    expect(line).toMatchObject({ status: 'ok', tool_calls: [{ name: 'tag', outcome: 'invalid', error: 'tag: "name" must match pattern "^([a-z0-9]+-?)+$"' }] });
  });
});
