import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { OLLAMA_OPTIONS, parseOptionAssignments } from '../../src/ollama/options.js';

describe('parseOptionAssignments', () => {
  it.each([
    [['num_predict=200'], { num_predict: 200 }],
    [['temperature=0.2'], { temperature: 0.2 }],
    [['temperature=1'], { temperature: 1 }],
    [['seed=-1'], { seed: -1 }],
    [['top_k=40', 'top_p=0.9', 'min_p=0.05'], { top_k: 40, top_p: 0.9, min_p: 0.05 }],
    [['use_mmap=false'], { use_mmap: false }],
    [['use_mmap=false'], { use_mmap: false }],
    [['stop=\n\n'], { stop: ['\n\n'] }],
    [['stop=User:', 'stop= END '], { stop: ['User:', ' END '] }],
    [['stop=a=b'], { stop: ['a=b'] }],
    [['temperature=0.1', 'temperature=0.7'], { temperature: 0.7 }],
    [['num_ctx= 8192 '], { num_ctx: 8192 }],
    [[], {}],
  ])('%j → %j', (assignments, expected) => {
    expect(parseOptionAssignments(assignments)).toEqual(expected);
  });

  it.each([
    ['temprature=0.2', '-o temprature: unknown Ollama option (did you mean "temperature"?); see docs/cli.md for the list'],
    ['num_predcit=5', '-o num_predcit: unknown Ollama option (did you mean "num_predict"?); see docs/cli.md for the list'],
    ['colour=red', '-o colour: unknown Ollama option; see docs/cli.md for the list'],
    ['keep_alive=10m', '-o keep_alive: not a model option; use --keep-alive'],
    ['system=hi', '-o system: not a model option; use --system or --system-file'],
    ['num_predict', '-o "num_predict": use key=value, e.g. -o num_predict=200'],
    ['=3', '-o "=3": use key=value, e.g. -o num_predict=200'],
    ['num_predict=2.5', '-o num_predict=2.5: num_predict takes a whole number'],
    ['num_predict=many', '-o num_predict=many: num_predict takes a whole number'],
    ['num_ctx=0', '-o num_ctx=0: the context window takes a whole number of 1 or more'],
    ['num_ctx=-4', '-o num_ctx=-4: the context window takes a whole number of 1 or more'],
    ['temperature=hot', '-o temperature=hot: temperature takes a number'],
    ['temperature=0x10', '-o temperature=0x10: temperature takes a number'],
    ['temperature=', '-o temperature=: temperature takes a number'],
    ['use_mmap=yes', '-o use_mmap=yes: use_mmap takes true or false'],
    ['stop=', '-o stop=: stop takes text (repeat -o stop=… for several)'],
    // Found by test/cli/parse.property.test.ts: what is not plain words is quoted as JSON, so the error is one line.
    ['\n', '-o "\\n": use key=value, e.g. -o num_predict=200'],
    ['num_predict=1\n2', '-o "num_predict=1\\n2": num_predict takes a whole number'],
    ['a\nb=1', '-o "a\\nb": unknown Ollama option; see docs/cli.md for the list'],
    ['temperature=very hot', '-o "temperature=very hot": temperature takes a number'],
  ])('%s is refused: %s', (assignment, message) => {
    expect(() => parseOptionAssignments([assignment])).toThrow(new UsageError(message));
  });

  it('knows exactly the options of Ollama\'s api/types.go', () => {
    expect(Object.keys(OLLAMA_OPTIONS).sort()).toEqual(
      ['draft_num_predict', 'frequency_penalty', 'main_gpu', 'min_p', 'num_batch', 'num_ctx', 'num_gpu', 'num_keep', 'num_predict', 'num_thread', 'presence_penalty', 'repeat_last_n', 'repeat_penalty', 'seed', 'stop', 'temperature', 'top_k', 'top_p', 'typical_p', 'use_mmap'].sort(),
    );
  });

  it.each(['mirostat', 'tfs_z', 'penalize_newline', 'use_mlock', 'numa'])('-o %s=1: Ollama dropped it, so it is refused rather than ignored', (name) => {
    expect(() => parseOptionAssignments([`${name}=1`])).toThrow(new UsageError(`-o ${name}: Ollama no longer takes this option (it was removed from its API and would be ignored); see docs/cli.md for the list`));
  });
});
