// Pure: the Ollama release that brought each feature Argo relies on, what a request needs of the
// server, and the one line for a server too old. Read from ollama/ollama's release tags, api/types.go
// and server/routes.go; docs/troubleshooting.md ("Ollama versions") lists them for users.

/** A release number: major, minor, patch. */
export type OllamaVersion = readonly [number, number, number];

export type OllamaFeature =
  | 'chat'
  | 'tools'
  | 'streamedToolCalls'
  | 'schemaFormat'
  | 'capabilities'
  | 'defaultWindow4096'
  | 'think'
  | 'thinkLevels'
  | 'thinkLevelsAnyModel'
  | 'logprobs'
  | 'thinkMax';

/** The features a request can be refused for: the ones an error line names. */
export type RefusedFeature = Extract<OllamaFeature, 'tools' | 'schemaFormat' | 'think' | 'thinkLevels' | 'thinkLevelsAnyModel' | 'logprobs' | 'thinkMax'>;

/** Each feature's first release, and its name in an error line. */
export const FEATURES: Record<OllamaFeature, { since: string; what: string }> = {
  // Before: no such route, a plain-text 404; only /api/generate answers.
  chat: { since: '0.1.14', what: 'the chat endpoint (/api/chat)' },
  // Before: `tools` is an unknown field, ignored; the model never hears of the tools.
  tools: { since: '0.2.6', what: 'tool calls' },
  // Before: calls are parsed only from a whole answer (`stream: false`); streamed, they arrive as text.
  streamedToolCalls: { since: '0.4.6', what: 'tool calls in a streamed answer' },
  // Before: `format` is a string; an object is a 400 (json: cannot unmarshal object … format of type string).
  schemaFormat: { since: '0.5.0', what: 'a JSON schema as the answer format' },
  // Before: /api/show has no `capabilities`.
  capabilities: { since: '0.6.4', what: "reporting a model's capabilities" },
  // Before: a request and model that set no num_ctx get 2048 tokens.
  defaultWindow4096: { since: '0.6.7', what: 'a 4096-token default context window' },
  // Before: `think` is an unknown field, ignored; a thinking model reasons inline, in <think> tags.
  think: { since: '0.9.0', what: 'thinking on or off' },
  // 0.9.0–0.10.x: `think` is a boolean; a level is a 400 (json: cannot unmarshal string … think of type bool).
  thinkLevels: { since: '0.11.0', what: 'thinking levels' },
  // 0.11.0–0.17.6: levels only for gpt-oss; any other model is a 400 (think value "high" is not supported for this model).
  thinkLevelsAnyModel: { since: '0.17.7', what: 'thinking levels for models other than gpt-oss' },
  // Before: `logprobs` is an unknown field, ignored; the answer carries none.
  logprobs: { since: '0.12.11', what: 'log probabilities' },
  // Before: "max" is a 400 (invalid think value: "max" …).
  thinkMax: { since: '0.22.0', what: 'the thinking level "max"' },
};

/**
 * `0.4.6`, `v0.12.10-rc1` → [0, 4, 6] / [0, 12, 10]; null for anything else, and for 0.0.0, which is
 * what a build from source reports: its features cannot be told from its number.
 */
export function parseVersion(text: unknown): OllamaVersion | null {
  // The server's word: not even a string, perhaps.
  if (typeof text !== 'string') return null;
  const match = /^v?(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:$|[-+])/.exec(text.trim());
  if (match === null) return null;
  const version: OllamaVersion = [Number(match[1]), Number(match[2]), Number(match[3])];
  return version.every((part) => part === 0) ? null : version;
}

export function versionText(version: OllamaVersion): string {
  return version.join('.');
}

/** Whether `version` is `since` or later; an unknown version (null) is taken to have everything. */
export function hasFeature(version: OllamaVersion | null, feature: OllamaFeature): boolean {
  if (version === null) return true;
  const wanted = parseVersion(FEATURES[feature].since) ?? [0, 0, 0];
  for (let i = 0; i < 3; i++) {
    const [a, b] = [version[i] ?? 0, wanted[i] ?? 0];
    if (a !== b) return a > b;
  }
  return true;
}

/** What a request asks of the server that Argo checks against the version before sending. */
export interface FitBody {
  stream: boolean;
  tools?: readonly unknown[] | undefined;
  think?: unknown;
  logprobs?: unknown;
}

/**
 * Whether a request needs the server's version before it is sent: an Ollama too old for tools,
 * `think` or `logprobs` ignores them without a word, so only the version tells. `think: false` asks for what such
 * an Ollama does anyway (it has no separate reasoning to turn off), so it is sent as it is.
 */
export function needsVersion(body: FitBody): boolean {
  return (body.tools !== undefined && body.tools.length > 0) || asksThinking(body) || body.logprobs === true;
}

function asksThinking(body: FitBody): boolean {
  return body.think !== undefined && body.think !== false;
}

/**
 * The request as this server can take it, or the feature it lacks. An Ollama that parses tool calls
 * only from whole answers (0.2.6–0.4.5) is asked for one; anything it would ignore is refused.
 */
export function fitRequest<B extends FitBody>(version: OllamaVersion | null, body: B): { body: B } | { missing: RefusedFeature } {
  const tools = body.tools !== undefined && body.tools.length > 0;
  if (tools && !hasFeature(version, 'tools')) return { missing: 'tools' };
  if (asksThinking(body)) {
    // The release the asked level needs, named at once: an older one refuses it in several steps.
    const needed = thinkFeature(body.think);
    if (!hasFeature(version, needed)) return { missing: needed };
  }
  if (body.logprobs === true && !hasFeature(version, 'logprobs')) return { missing: 'logprobs' };
  if (tools && body.stream && !hasFeature(version, 'streamedToolCalls')) return { body: { ...body, stream: false } };
  return { body };
}

/**
 * What a `think` value needs of the server: a level more than on/off, and "max" more than the
 * other levels (levels for models other than gpt-oss come later still, but the model's family is
 * not known here: that refusal is Ollama's).
 */
export function thinkFeature(think: unknown): 'think' | 'thinkLevels' | 'thinkMax' {
  if (think === 'max') return 'thinkMax';
  return typeof think === 'string' ? 'thinkLevels' : 'think';
}

/**
 * A 400 that shows the server lacks a feature (its words differ by release), or null; `think` is
 * the value the request sent (a 0.9–0.10 server refuses every level alike, "max" included).
 */
export function rejectedFeature(detail: string, think?: unknown): RefusedFeature | null {
  if (/Go struct field \w+\.think of type bool/.test(detail)) return think === 'max' ? 'thinkMax' : 'thinkLevels';
  if (/^think value ".*" is not supported for this model/.test(detail)) return 'thinkLevelsAnyModel';
  if (detail.startsWith('invalid think value: "max"')) return 'thinkMax';
  if (/Go struct field \w+\.format of type string/.test(detail)) return 'schemaFormat';
  return null;
}

/**
 * Whose fix to offer for a missing think feature: the way out this release takes. "Use --think
 * high" is none on a release that takes no level, nor "use --think on" on one without thinking.
 */
export function fixFor(missing: RefusedFeature, version: OllamaVersion | null): RefusedFeature {
  if (missing !== 'thinkMax' && missing !== 'thinkLevels') return missing;
  if (!hasFeature(version, 'think')) return 'think';
  if (missing === 'thinkMax' && !hasFeature(version, 'thinkLevels')) return 'thinkLevels';
  // 0.11–0.17.6 take "high" from gpt-oss only: "on" is the way out for every model.
  return missing === 'thinkMax' && !hasFeature(version, 'thinkLevelsAnyModel') ? 'thinkLevelsAnyModel' : missing;
}

/** The one line for a server too old for `feature`: the version found, the one needed, and the fix. */
export function tooOldLine(feature: RefusedFeature, found: OllamaVersion | null, host: string, fix: string): string {
  const server = found === null ? `Ollama at ${host}` : `Ollama ${versionText(found)} at ${host}`;
  const { since, what } = FEATURES[feature];
  if (feature === 'thinkLevels') {
    const later = FEATURES.thinkLevelsAnyModel.since;
    return `${server} is too old for ${what} (needs Ollama ${since} or newer for gpt-oss models, ${later} for others); ${fix}, or upgrade Ollama`;
  }
  if (feature === 'thinkLevelsAnyModel') {
    return `${server} takes thinking levels from gpt-oss models only (other models need Ollama ${since} or newer); ${fix}, or upgrade Ollama`;
  }
  return `${server} is too old for ${what} (needs Ollama ${since} or newer); ${fix}, or upgrade Ollama`;
}
