import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { afterOutput } from '../../src/cli/io.js';

/** A stream whose every write ends as `write` says: failed at once, written, or never. */
function stream(write: 'fails' | 'ok' | 'never'): Writable {
  return new Writable({
    write(_chunk, _encoding, callback) {
      if (write === 'fails') callback(Object.assign(new Error('no space'), { code: 'ENOSPC' }));
      else if (write === 'ok') callback();
    },
  });
}

describe('afterOutput: resolves once what was written has gone out or failed, its failure heard first', () => {
  it.each<[string, 'fails' | 'ok', boolean]>([
    ['a write that failed at once (a full disk)', 'fails', true],
    ['a write that went out', 'ok', false],
  ])('%s', async (_case, write, failed) => {
    const out = stream(write);
    const heard: string[] = [];
    out.on('error', (error: NodeJS.ErrnoException) => heard.push(String(error.code)));
    out.write('the answer\n');
    await afterOutput(out);
    expect(heard).toEqual(failed ? ['ENOSPC'] : []);
  });

  it('a stream destroyed already: resolves', async () => {
    const out = stream('ok');
    out.destroy();
    await expect(afterOutput(out)).resolves.toBeUndefined();
  });

  it('a write still waiting (a reader that does not read): resolves when the signal aborts', async () => {
    const out = stream('never');
    out.write('the answer\n');
    const controller = new AbortController();
    const waiting = afterOutput(out, controller.signal);
    controller.abort();
    await expect(waiting).resolves.toBeUndefined();
  });
});
