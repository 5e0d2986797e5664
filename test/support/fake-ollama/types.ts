// The stand-in's public types: what a test configures and what it can inspect afterwards.
import type { IncomingHttpHeaders } from 'node:http';

export type Endpoint = 'generate' | 'chat';
export type RequestBody = Record<string, unknown>;

export interface FakeModel {
  name: string; // any spelling; listed with its tag, e.g. `argo` → `argo:latest`
  capabilities?: string[]; // default ['completion']; chat and generate need 'completion'
  family?: string; // default 'llama'
  contextLength?: number; // the trained maximum: model_info['<family>.context_length'], default 131072
  // The Modelfile's `num_ctx` parameter: the window when a request sets no options.num_ctx.
  numCtx?: number;
  // The tag Ollama's tool parser finds this model's calls by (tools.parseTag, from its template):
  // default '<tool_call>' (qwen and most). With '{' or '[' (llama 3.x writes bare JSON calls) a call
  // must open the answer, or the whole answer is text; and a call the token limit cuts short reaches
  // the client as text in the done:true line (tools.Parser.Content), where with any other tag it is
  // dropped. A gpt-oss model (harmony, 0.11.0+) has a parser of its own and ignores this.
  toolTag?: string;
  // Further Modelfile parameters for /api/show's `parameters` block; default { stop: '<|eot_id|>' }.
  parameters?: Record<string, string | number | (string | number)[]>;
  parameterSize?: string;
  quantizationLevel?: string;
  size?: number;
  modifiedAt?: string;
  // A cloud model (`ollama pull gpt-oss:120b-cloud`: its Modelfile names a remote host): answered
  // as a local one, unless `cloud` says the server cannot reach ollama.com for it.
  remote?: boolean;
}

// A string is sent as written, as a JSON string value: valid JSON text or not.
export type FakeToolArguments = Record<string, unknown> | string;

export interface FakeToolCall {
  id?: string; // sent as given (0.12.10+); without one, the stand-in makes one as `callIds` says
  function: { index?: number; name: string; arguments: FakeToolArguments };
}

// What the model does in one chat request ("round"). Tool calls are sent only when the request
// offers tools (Ollama parses calls out of the output only then); otherwise the text is all.
export interface FakeRound {
  reply?: string; // text before the calls; default: no text when there are calls, else the default reply
  tokens?: string[]; // explicit tokens; wins over `reply`
  toolCalls?: FakeToolCall[];
  // One chunk per call instead of all calls in one chunk (clients must collect across chunks).
  splitToolCalls?: boolean;
  // Stream faults for this round only, instead of the server-wide scenario's.
  scenario?: FakeStreamFaults;
}

// The faults that happen once the model answers (a round's own scenario holds only these).
export type FakeStreamFaults = Omit<FakeScenario, 'busy' | 'busyRetryAfter' | 'busyAsRateLimit' | 'runnerError' | 'proxyPage' | 'firstChunkDelayMs' | 'times'>;

export interface FakeScenario {
  // The next N generate/chat requests get 503 (decremented as used), then normal service.
  busy?: number;
  // Sent with each of those 503s as Retry-After (Ollama sends none; a proxy before it may).
  busyRetryAfter?: string;
  // Those refusals as a rate limit instead: 429 `rate limit exceeded` (a cloud model's, passed on by Ollama).
  busyAsRateLimit?: boolean;
  // 500 before the first chunk; a string replaces the default runner message.
  runnerError?: boolean | string;
  // A proxy before Ollama answers instead of it, before the first chunk: this status and body (an
  // nginx 502 page, say), sent as text/html unless `type` says otherwise.
  proxyPage?: { status: number; body: string; type?: string };
  // After K chunks: one `{"error":…}` line, then the stream ends without a done line (status 200).
  errorMidStream?: number | { afterChunks: number; message?: string };
  // After K chunks the socket is destroyed.
  dropAfter?: number;
  // After K chunks a line that is not JSON; then the stream goes on ('continue', default) or ends.
  malformedAfter?: number | { afterChunks: number; line?: string; then?: 'continue' | 'end' };
  // End cleanly without the done line: true = after every chunk, K = after K chunks.
  truncate?: boolean | number;
  // After K chunks send nothing more until the client leaves. Ollama sends its headers with the first
  // line (Gin's c.Stream), so 0 (or 'beforeHeaders') hangs before the status line: a model loading.
  hang?: number | 'beforeHeaders';
  // After K chunks pause until the test calls `fake.release()`, then go on; 0 pauses before the
  // headers too, as a real Ollama sends nothing before its first line.
  holdAfter?: number;
  // A buffering proxy before Ollama: after the done line the response is not ended, but held open
  // until the client leaves (streamed answers only).
  openAfterDone?: boolean;
  // Ends the body this long after its done line, in a write of its own, as Ollama's Go server does
  // (Gin flushes each line; the chunked end follows once the handler returns). 0: with the done line.
  endAfterMs?: number;
  delayMs?: number; // between chunks
  firstChunkDelayMs?: number; // model load: before the headers and the first chunk
  // How many more generate/chat requests this scenario applies to (busy keeps its own count);
  // undefined = all of them.
  times?: number;
}

export interface FakeOllamaOptions {
  host?: string | undefined; // default 127.0.0.1
  port?: number | undefined; // default 0 (any free port)
  // The release to answer as (default CURRENT_VERSION in versions.ts): /api/version says it, and
  // what that release lacks is off (versions.ts lists each feature's first release).
  version?: string;
  models?: FakeModel[] | undefined; // default [{ name: 'argo:latest' }]
  // The answer text; default `You said: <last user content | prompt>`.
  reply?: string | ((body: RequestBody, endpoint: Endpoint) => string) | undefined;
  // Explicit tokens; wins over `reply`. Otherwise the text is split into words with their
  // leading whitespace.
  tokens?: string[] | ((body: RequestBody, endpoint: Endpoint) => string[]) | undefined;
  // Carry the last token in the done:true line instead of a chunk of its own.
  textInDone?: boolean;
  // The reasoning a model with the `thinking` capability streams before its answer, in `thinking`
  // fields with empty content (Ollama 0.12.4+ thinks by default; `think: false` turns it off). A
  // release without `think` (before 0.9.0), or one asked nothing before 0.12.4, writes it in the
  // text between <think> tags.
  thinking?: string | undefined;
  // Tool-call ids (0.12.10+), for calls the script gives none: 'random' (default) gives each one,
  // `call_` and 8 random [a-z0-9], as Ollama does; 'seeded' the same shape from a fixed sequence (the
  // same ids in every test run: seededCallId(0), (1), …); 'scripted' none (only the script's ids go
  // out: calls without ids, as a release before 0.12.10 sends every call). A release before 0.12.10
  // sends no id at all, the script's neither.
  callIds?: 'random' | 'seeded' | 'scripted' | undefined;
  // Chat only, and only when the request offers tools: sent in one done:false chunk, every round.
  toolCalls?: FakeToolCall[] | ((body: RequestBody) => FakeToolCall[] | undefined);
  // Chat rounds in order: the first chat request gets rounds[0], and so on; a function gets the
  // round's number (0-based). Past the script (or `undefined`), the answer falls back to
  // reply/tokens/toolCalls above.
  rounds?: FakeRound[] | ((body: RequestBody, round: number) => FakeRound | undefined) | undefined;
  // The server's default window (OLLAMA_CONTEXT_LENGTH) when neither the request nor the model sets one.
  defaultNumCtx?: number; // default: the release's (4096; 2048 before 0.6.7)
  // /api/show sends nothing until the client leaves: an Ollama reading a model file from a slow disk,
  // or stuck (nothing in the protocol bounds it; Node's client gives up after 300 s).
  stallShow?: boolean | undefined;
  // /api/show fails with 500 and this error, as Ollama's ShowHandler does for a model it cannot read.
  showError?: string | undefined;
  // /api/ps the same: sends nothing until the client leaves.
  stallPs?: boolean | undefined;
  scenario?: FakeScenario | undefined;
  // How a request for a `remote` model fares: 'disabled' is a server with OLLAMA_NO_CLOUD set (403
  // `ollama cloud is disabled: remote model is unavailable`), 'signed-out' one not signed in to
  // ollama.com (401 `unauthorized` with a `signin_url`). Default: answered as a local model.
  cloud?: 'disabled' | 'signed-out' | undefined;
  // /api/tags answers with this body (application/json) instead of the model list: something in
  // front of Ollama, or another server, with a list of another shape. Ollama's is never null.
  tagsBody?: string | undefined;
}

export interface RecordedRequest {
  method: string;
  path: string; // without the query string
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown; // undefined when the body is empty or not JSON
  status: number | undefined; // once the headers went out
  linesWritten: number; // NDJSON lines actually written
  clientAborted: boolean; // the client went away before the response was complete
  held: boolean; // parked at a `holdAfter` point right now
  // generate/chat that reached the model: the window used, the prompt's estimated tokens (before
  // any cut) and whether the prompt was cut to fit, as Ollama's server log would say.
  prompt: { tokens: number; numCtx: number; truncated: boolean } | undefined;
  // Resolves once the response is closed, whatever the reason, and the stand-in has stopped
  // working on it: `linesWritten` and `clientAborted` are final then.
  settled: Promise<void>;
}

export interface FakeOllama {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  readonly connections: number; // TCP connections accepted so far
  readonly rounds: number; // chat rounds answered so far (scripted or not)
  options: FakeOllamaOptions; // read on every request: mutate freely between calls
  setScenario(scenario: FakeScenario | undefined): void;
  // The parsed bodies of every /api/chat request, in order: what was fed back to the model.
  chatBodies(): RequestBody[];
  // The first recorded request matching `match` (default: any), now or when it arrives.
  waitForRequest(match?: (request: RecordedRequest) => boolean): Promise<RecordedRequest>;
  // A request parked at its hold point, now or when one gets there.
  waitForHold(): Promise<RecordedRequest>;
  // Lets every held stream go on.
  release(): void;
  close(): Promise<void>;
}
