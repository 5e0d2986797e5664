// The replay planner's input as the tests give it, unless one says otherwise.
import type { PlanInput } from '../../src/replay/plan.js';
import { DEFAULT_REPLAY_POLICY, DEFAULT_STYLE_POLICY } from '../../src/replay/policy.js';

/** What a test says of a plan input: the prompt and the replay spec always, any other field to change its default. */
export type PlanInputFields = Pick<PlanInput, 'input' | 'spec'> & Partial<PlanInput>;

/** No history, the default policies, no mode, persona neutral, verbosity auto, a streamed chat to model argo. */
export function makePlanInput(fields: PlanInputFields): PlanInput {
  return {
    history: [],
    policy: DEFAULT_REPLAY_POLICY,
    style: DEFAULT_STYLE_POLICY,
    mode: null,
    persona: 'neutral',
    verbosity: 'auto',
    request: { endpoint: 'chat', model: 'argo', stream: true, options: {} },
    ...fields,
  };
}
