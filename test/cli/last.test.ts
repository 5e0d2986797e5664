import { describe, expect, it } from 'vitest';
import { whatIsLeft } from '../../src/cli/last.js';

describe("what argo last says a turn that did not end ok left", () => {
  it.each([
    ['error', '', 'it has no answer'],
    ['needs_input', '', 'it has no answer'],
    ['interrupted', 'Half an ans', 'its answer is partial'],
    ['stopped', 'Half', 'its answer is partial'],
    ['error', 'Cut off by a dropped conn', 'its answer is partial'],
    ['needs_input', 'Let me look at the file.', 'it stopped before answering'],
    ['tool_failures', 'Trying.', 'it stopped before answering'],
    ['max_iterations', 'Still looking.', 'it stopped before answering'],
    ['invalid_response', 'x', 'it stopped before answering'],
  ] as const)('%s with %j: %s', (status, response, words) => {
    expect(whatIsLeft({ status: status, model_response: response })).toBe(words);
  });
});
