// Ports for a turn run in-process: a model that answers at once, a fixed day and id, and the CLI's rescue.
import type { StreamOutcome } from '../../src/ollama/transport.js';
import type { Transport, TurnPorts } from '../../src/turn/turn.js';

const METRICS: StreamOutcome['metrics'] = { total_duration: 1, load_duration: 0, prompt_eval_count: 1, prompt_eval_duration: 1, eval_count: 1, eval_duration: 1, done_reason: 'stop' };

/** A model that answers "the answer" in one chunk. */
export const answeringTransport: Transport = {
  stream: (_request, hooks) => {
    hooks.onText('the answer');
    return Promise.resolve({ status: 'ok', failure: null, metrics: METRICS, attempts: 1 });
  },
  installedModels: () => Promise.resolve([]),
};

/**
 * A turn on 2025-03-04 with this id, rescued the way the CLI rescues it. The log's file module is
 * imported when a rescue happens, so a test that mocks it gets its mock.
 */
export const portsFor = (id: string): TurnPorts => ({
  transport: answeringTransport,
  now: () => new Date('2025-03-04T05:06:07.000Z'),
  clock: () => 0,
  newId: () => id,
  rescue: async (text, dataHome) => (await import('../../src/log/fs.js')).rescueText(dataHome, text),
});

/**
 * Ports for a turn whose answer comes from `extra.answer` (never the transport): a fixed day, a
 * clock that moves 10 ms at each look, one id, and no rescue expected.
 */
export function answerPorts(extra: Partial<TurnPorts> = {}): TurnPorts {
  let tick = 0;
  return {
    transport: { stream: () => Promise.reject(new Error('no stream expected')), installedModels: () => Promise.resolve([]) },
    now: () => new Date('2025-03-04T05:06:07.000Z'),
    clock: () => (tick += 10),
    newId: () => 'turn00000001',
    rescue: () => Promise.reject(new Error('no rescue expected')),
    ...extra,
  };
}
