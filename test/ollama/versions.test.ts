import { describe, expect, it } from 'vitest';
import { CLI_HINTS, SERVER_HINTS } from '../../src/ollama/fix-hints.js';
import { FEATURES, fitRequest, fixFor, hasFeature, needsVersion, parseVersion, rejectedFeature, tooOldLine } from '../../src/ollama/versions.js';
import type { FitBody, OllamaFeature, OllamaVersion } from '../../src/ollama/versions.js';

describe('parseVersion', () => {
  it.each<[unknown, OllamaVersion | null]>([
    ['0.4.6', [0, 4, 6]],
    ['v0.12.10', [0, 12, 10]],
    [' 0.9.0\n', [0, 9, 0]],
    ['0.6.4-rc1', [0, 6, 4]],
    ['0.5.7-0-ga420a45-dirty', [0, 5, 7]],
    ['1.2.3+build', [1, 2, 3]],
    // A build from source says 0.0.0: its features cannot be told from it.
    ['0.0.0', null],
    ['0.12', null],
    ['0.12.0.1', null],
    ['0.12.0\u001b]0;pwned\u0007', null],
    ['latest', null],
    ['', null],
    [12, null],
    [null, null],
  ])('%j → %j', (text, version) => {
    expect(parseVersion(text)).toEqual(version);
  });
});

describe('hasFeature: each feature from its first release on', () => {
  it.each<[OllamaFeature, string, string]>([
    ['chat', '0.1.13', '0.1.14'],
    ['tools', '0.2.5', '0.2.6'],
    ['streamedToolCalls', '0.4.5', '0.4.6'],
    ['schemaFormat', '0.4.7', '0.5.0'],
    ['capabilities', '0.6.3', '0.6.4'],
    ['defaultWindow4096', '0.6.6', '0.6.7'],
    ['think', '0.8.0', '0.9.0'],
    ['thinkLevels', '0.10.1', '0.11.0'],
    ['thinkLevelsAnyModel', '0.17.6', '0.17.7'],
    ['logprobs', '0.12.10', '0.12.11'],
    ['thinkMax', '0.21.9', '0.22.0'],
  ])('%s: not in %s, in %s and later', (feature, before, since) => {
    expect(FEATURES[feature].since).toBe(since);
    expect(hasFeature(parseVersion(before), feature)).toBe(false);
    expect(hasFeature(parseVersion(since), feature)).toBe(true);
    expect(hasFeature([1, 0, 0], feature)).toBe(true);
  });

  it('compares numbers, not text: 0.10.0 is after 0.9.6', () => {
    expect(hasFeature([0, 10, 0], 'think')).toBe(true);
    expect(hasFeature([0, 9, 10], 'thinkLevels')).toBe(false);
  });

  it('an unknown release (null) is taken to have everything', () => {
    expect(Object.keys(FEATURES).every((feature) => hasFeature(null, feature as OllamaFeature))).toBe(true);
  });
});

describe('needsVersion and fitRequest: what is checked before sending', () => {
  const TOOLS = [{ type: 'function' }];
  it.each<[string, FitBody, boolean]>([
    ['a plain question', { stream: true }, false],
    ['an empty tools list', { stream: true, tools: [] }, false],
    ['tools', { stream: true, tools: TOOLS }, true],
    ['think on', { stream: true, think: true }, true],
    ['think off (an old Ollama ignores it, which is what it asks)', { stream: false, think: false }, false],
    ['a think level', { stream: true, think: 'high' }, true],
    ['log probabilities', { stream: true, logprobs: true }, true],
    ['logprobs false (asks for none)', { stream: true, logprobs: false }, false],
  ])('%s: asks the version first = %s', (_case, body, asks) => {
    expect(needsVersion(body)).toBe(asks);
  });

  it.each<[string, string | null, FitBody, ReturnType<typeof fitRequest>]>([
    ['tools before 0.2.6 are ignored: refused', '0.2.5', { stream: true, tools: TOOLS }, { missing: 'tools' }],
    ['tools streamed before 0.4.6 come as text: asked whole', '0.3.0', { stream: true, tools: TOOLS }, { body: { stream: false, tools: TOOLS } }],
    ['tools asked whole anyway', '0.3.0', { stream: false, tools: TOOLS }, { body: { stream: false, tools: TOOLS } }],
    ['tools streamed since 0.4.6', '0.4.6', { stream: true, tools: TOOLS }, { body: { stream: true, tools: TOOLS } }],
    ['think before 0.9.0 is ignored: refused', '0.8.0', { stream: true, think: true }, { missing: 'think' }],
    ['think off is sent as it is: ignored, as asked', '0.8.0', { stream: true, think: false }, { body: { stream: true, think: false } }],
    ['tools are named first', '0.2.0', { stream: true, tools: TOOLS, think: true }, { missing: 'tools' }],
    ['a level before 0.11.0 is refused: its release named, not 0.9.0', '0.8.0', { stream: true, think: 'high' }, { missing: 'thinkLevels' }],
    ['a level on 0.9–0.10 (think is a boolean there) is refused before sending', '0.10.1', { stream: true, think: 'low' }, { missing: 'thinkLevels' }],
    ['a level since 0.11.0 (left to Ollama to refuse for models other than gpt-oss)', '0.11.0', { stream: true, think: 'high' }, { body: { stream: true, think: 'high' } }],
    ['"max" before 0.22.0 names 0.22.0 at once, whatever the release', '0.8.0', { stream: true, think: 'max' }, { missing: 'thinkMax' }],
    ['"max" on 0.10', '0.10.0', { stream: true, think: 'max' }, { missing: 'thinkMax' }],
    ['"max" on 0.21.9', '0.21.9', { stream: true, think: 'max' }, { missing: 'thinkMax' }],
    ['"max" since 0.22.0', '0.22.0', { stream: true, think: 'max' }, { body: { stream: true, think: 'max' } }],
    ['logprobs before 0.12.11 are ignored (empty content): refused', '0.12.10', { stream: true, logprobs: true }, { missing: 'logprobs' }],
    ['logprobs since 0.12.11', '0.12.11', { stream: false, logprobs: true }, { body: { stream: false, logprobs: true } }],
    ['logprobs false on any release', '0.1.14', { stream: true, logprobs: false }, { body: { stream: true, logprobs: false } }],
    ['an unknown release gets the request as it is', null, { stream: true, tools: TOOLS, think: true }, { body: { stream: true, tools: TOOLS, think: true } }],
    ['a plain question on any release', '0.1.14', { stream: true }, { body: { stream: true } }],
  ])('%s (%s)', (_case, version, body, fitted) => {
    expect(fitRequest(version === null ? null : parseVersion(version), body)).toEqual(fitted);
  });
});

describe('rejectedFeature: a 400 that shows the release lacks a feature (each release words it its own way)', () => {
  it.each<[string, ReturnType<typeof rejectedFeature>]>([
    // 0.9.0–0.10.x: think is a *bool
    ['json: cannot unmarshal string into Go struct field ChatRequest.think of type bool', 'thinkLevels'],
    ['json: cannot unmarshal string into Go struct field GenerateRequest.think of type bool', 'thinkLevels'],
    // 0.11.0–0.17.6: levels for gpt-oss only
    ['think value "high" is not supported for this model', 'thinkLevelsAnyModel'],
    // before 0.22.0
    ['invalid think value: "max" (must be "high", "medium", "low", true, or false)', 'thinkMax'],
    // before 0.5.0: format is a string
    ['json: cannot unmarshal object into Go struct field ChatRequest.format of type string', 'schemaFormat'],
    // Not a missing feature
    ['invalid think value: "extreme" (must be "high", "medium", "low", "max", true, or false)', null],
    ['"argo" does not support thinking', null],
    ['qwen3:latest does not support tools', null],
    ['json: cannot unmarshal number into Go struct field ChatRequest.stream of type bool', null],
    ['', null],
  ])('%j → %s', (detail, feature) => {
    expect(rejectedFeature(detail)).toBe(feature);
  });

  it.each<[unknown, ReturnType<typeof rejectedFeature>]>([
    ['max', 'thinkMax'],
    ['high', 'thinkLevels'],
    [undefined, 'thinkLevels'],
  ])('a 0.9–0.10 refusal of the level %j names what that level needs', (think, feature) => {
    expect(rejectedFeature('json: cannot unmarshal string into Go struct field ChatRequest.think of type bool', think)).toBe(feature);
  });
});

describe('fixFor: the way out a release takes', () => {
  it.each<[Parameters<typeof fixFor>[0], string | null, ReturnType<typeof fixFor>]>([
    ['thinkMax', '0.21.0', 'thinkMax'],
    ['thinkMax', '0.17.7', 'thinkMax'],
    ['thinkMax', '0.12.0', 'thinkLevelsAnyModel'],
    ['thinkMax', '0.10.1', 'thinkLevels'],
    ['thinkMax', '0.8.0', 'think'],
    ['thinkLevels', '0.10.1', 'thinkLevels'],
    ['thinkLevels', '0.8.0', 'think'],
    ['thinkLevelsAnyModel', '0.12.0', 'thinkLevelsAnyModel'],
    ['thinkMax', null, 'thinkMax'],
    ['tools', '0.2.0', 'tools'],
    ['logprobs', '0.12.10', 'logprobs'],
  ])('%s on %s: the fix of %s', (missing, version, fix) => {
    expect(fixFor(missing, version === null ? null : parseVersion(version))).toBe(fix);
  });
});

describe('tooOldLine', () => {
  const HOST = 'http://127.0.0.1:11434';
  it.each<[Parameters<typeof tooOldLine>[0], OllamaVersion | null, string, string]>([
    ['tools', [0, 2, 5], CLI_HINTS.tooOld.tools, `Ollama 0.2.5 at ${HOST} is too old for tool calls (needs Ollama 0.2.6 or newer); ask without --tools (and "tools" in config.json), or upgrade Ollama`],
    ['think', [0, 8, 0], CLI_HINTS.tooOld.think, `Ollama 0.8.0 at ${HOST} is too old for thinking on or off (needs Ollama 0.9.0 or newer); leave out --think (and "think" in config.json), or upgrade Ollama`],
    ['thinkLevels', [0, 10, 1], CLI_HINTS.tooOld.thinkLevels, `Ollama 0.10.1 at ${HOST} is too old for thinking levels (needs Ollama 0.11.0 or newer for gpt-oss models, 0.17.7 for others); use --think on, or upgrade Ollama`],
    ['thinkLevelsAnyModel', [0, 12, 0], CLI_HINTS.tooOld.thinkLevelsAnyModel, `Ollama 0.12.0 at ${HOST} takes thinking levels from gpt-oss models only (other models need Ollama 0.17.7 or newer); use --think on, or upgrade Ollama`],
    ['thinkMax', [0, 21, 0], SERVER_HINTS.tooOld.thinkMax, `Ollama 0.21.0 at ${HOST} is too old for the thinking level "max" (needs Ollama 0.22.0 or newer); send "reasoning_effort": "high", or upgrade Ollama`],
    ['logprobs', [0, 12, 10], SERVER_HINTS.tooOld.logprobs, `Ollama 0.12.10 at ${HOST} is too old for log probabilities (needs Ollama 0.12.11 or newer); leave out "logprobs" and "top_logprobs", or upgrade Ollama`],
    ['schemaFormat', null, SERVER_HINTS.tooOld.schemaFormat, `Ollama at ${HOST} is too old for a JSON schema as the answer format (needs Ollama 0.5.0 or newer); send "response_format": {"type": "json_object"}, or upgrade Ollama`],
  ])('%s, found %j', (feature, found, fix, line) => {
    expect(tooOldLine(feature, found, HOST, fix)).toBe(line);
  });
});
