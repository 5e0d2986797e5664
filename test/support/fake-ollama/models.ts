// The model registry: names as Ollama parses and compares them, /api/tags, /api/show, /api/ps,
// and the context window a request runs with.
import { createHash } from 'node:crypto';
import type { Handler } from './exchange.js';
import { sendBody, sendJson } from './exchange.js';
import type { FakeModel, FakeOllamaOptions, RequestBody } from './types.js';
import { profileOfOptions } from './versions.js';
import { HttpError, bindBody, pick, rfc3339, str } from './wire.js';

const DEFAULT_MODELS: FakeModel[] = [{ name: 'argo:latest' }];
// OLLAMA_CONTEXT_LENGTH's default in current releases.
export const DEFAULT_NUM_CTX = 4096;
const DEFAULT_PARAMETERS: NonNullable<FakeModel['parameters']> = { stop: '<|eot_id|>' };

// Model names: [host/][namespace/]model[:tag], defaults registry.ollama.ai/library/…:latest,
// compared case-insensitively (types/model/name.go).

interface ModelName {
  host: string;
  namespace: string;
  model: string;
  tag: string;
}

const NAME_PART = /^[A-Za-z0-9_.-]+$/;
const HOST_PART = /^[A-Za-z0-9_.:-]+$/;

export function parseModelName(raw: string): ModelName | undefined {
  let s = raw.replace(/^https?:\/\//, '').replace(/[@+].*$/, ''); // digest and build do not name
  let tag = 'latest';
  const colon = s.lastIndexOf(':');
  if (colon > s.lastIndexOf('/')) {
    tag = s.slice(colon + 1);
    s = s.slice(0, colon);
  }
  const parts = s.split('/');
  if (parts.length > 3) return undefined;
  const model = parts.pop() ?? '';
  const namespace = parts.pop() ?? 'library';
  const host = parts.pop() ?? 'registry.ollama.ai';
  const valid =
    NAME_PART.test(model) && NAME_PART.test(tag) && HOST_PART.test(host) &&
    NAME_PART.test(namespace) && !namespace.includes('.');
  return valid ? { host, namespace, model, tag } : undefined;
}

const fullName = (n: ModelName): string => `${n.host}/${n.namespace}/${n.model}:${n.tag}`;

// Like DisplayShortest, except the tag is never masked (`/api/tags` always shows it).
function displayName(n: ModelName): string {
  const defaultHost = n.host.toLowerCase() === 'registry.ollama.ai';
  const prefix = !defaultHost
    ? `${n.host}/${n.namespace}/`
    : n.namespace.toLowerCase() === 'library' ? '' : `${n.namespace}/`;
  return `${prefix}${n.model}:${n.tag}`;
}

export interface ResolvedModel {
  key: string; // lower-cased full name
  full: string;
  display: string;
  digest: string;
  family: string;
  capabilities: string[];
  toolTag: string;
  contextLength: number;
  numCtx: number | undefined;
  parameters: string; // /api/show's text block
  size: number;
  modifiedAt: string;
  details: Record<string, unknown>;
  remote: boolean;
}

export function resolveModel(config: FakeModel): ResolvedModel {
  const name = parseModelName(config.name);
  if (!name) throw new Error(`fake-ollama: invalid model name ${JSON.stringify(config.name)}`);
  const family = config.family ?? 'llama';
  const full = fullName(name);
  return {
    key: full.toLowerCase(),
    full,
    display: displayName(name),
    digest: createHash('sha256').update(full.toLowerCase()).digest('hex'),
    family,
    capabilities: config.capabilities ?? ['completion'],
    toolTag: config.toolTag ?? '<tool_call>',
    contextLength: config.contextLength ?? 131_072,
    numCtx: config.numCtx,
    parameters: parametersBlock(config),
    size: config.size ?? 4_920_753_328,
    modifiedAt: config.modifiedAt ?? '2026-01-15T09:30:00Z',
    remote: config.remote === true,
    details: {
      parent_model: '',
      format: 'gguf',
      family,
      families: [family],
      parameter_size: config.parameterSize ?? '8.0B',
      quantization_level: config.quantizationLevel ?? 'Q4_K_M',
    },
  };
}

export const modelsOf = (options: FakeOllamaOptions): ResolvedModel[] =>
  (options.models ?? DEFAULT_MODELS).map(resolveModel);

export function findModel(options: FakeOllamaOptions, requested: string): ResolvedModel | undefined {
  const name = parseModelName(requested);
  const key = name && fullName(name).toLowerCase();
  return modelsOf(options).find((m) => m.key === key);
}


// Like `fmt.Sprintf("%-*s %#v", 30, name, value)` per value, one line each (server/routes.go).
function parametersBlock(config: FakeModel): string {
  const all: NonNullable<FakeModel['parameters']> = {
    ...(config.numCtx === undefined ? {} : { num_ctx: config.numCtx }),
    ...(config.parameters ?? DEFAULT_PARAMETERS),
  };
  return Object.entries(all)
    .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => [name, v] as const))
    .map(([name, value]) => `${name.padEnd(30)} ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`)
    .join('\n');
}

// The window a request runs with: options.num_ctx, else the model's num_ctx parameter, else the
// server default; never more than the model was trained for (the runner caps it).
export function contextWindow(options: FakeOllamaOptions, model: ResolvedModel, body: RequestBody): number {
  const requested = (pick(body, 'options') as RequestBody | undefined)?.num_ctx;
  const numCtx = typeof requested === 'number' && requested > 0
    ? requested
    : (model.numCtx ?? options.defaultNumCtx ?? profileOfOptions(options).defaultNumCtx);
  return Math.min(numCtx, model.contextLength);
}

export const handleTags: Handler = (state, ctx) => {
  if (state.options.tagsBody !== undefined) { sendBody(ctx, 200, state.options.tagsBody, 'application/json; charset=utf-8'); return; }
  const models = modelsOf(state.options).map((m) => ({
    name: m.display, model: m.display, modified_at: m.modifiedAt, size: m.size, digest: m.digest,
    details: m.details,
  }));
  sendJson(ctx, 200, { models });
};

export const handleShow: Handler = (state, ctx) => {
  if (state.options.stallShow === true) return ctx.untilGone();
  if (state.options.showError !== undefined) throw new HttpError(500, state.options.showError);
  const body = bindBody(ctx.record.body, 'ShowRequest');
  const requested = str(pick(body, 'model')) || str(pick(body, 'name'));
  if (!requested) throw new HttpError(400, 'model is required');
  if (!parseModelName(requested)) throw new HttpError(400, 'invalid model name');
  const model = findModel(state.options, requested);
  if (!model) throw new HttpError(404, `model '${requested}' not found`);
  const profile = profileOfOptions(state.options);
  // Before 0.9.0 no model was said to think; before 0.6.4 none was said to do anything.
  const capabilities = profile.think ? model.capabilities : model.capabilities.filter((c) => c !== 'thinking');
  sendJson(ctx, 200, {
    modelfile: `# Modelfile generated by "ollama show"\nFROM ${model.display}\n`,
    parameters: model.parameters,
    template: '{{ .Prompt }}',
    details: model.details,
    ...(profile.modelInfo ? {
      model_info: {
        'general.architecture': model.family,
        'general.parameter_count': 8_030_261_248,
        [`${model.family}.context_length`]: model.contextLength,
        [`${model.family}.embedding_length`]: 4096,
      },
    } : {}),
    ...(profile.capabilities ? { capabilities } : {}),
    modified_at: model.modifiedAt,
  });
};

export const handlePs: Handler = (state, ctx) => {
  if (state.options.stallPs === true) return ctx.untilGone();
  const now = Date.now();
  const models = [...state.loaded.values()]
    .filter((entry) => entry.expiresAt > now)
    .map(({ model, expiresAt, contextLength }) => ({
      name: model.display, model: model.display, size: model.size, digest: model.digest,
      details: model.details, expires_at: rfc3339(expiresAt), size_vram: model.size,
      ...(profileOfOptions(state.options).psContextLength ? { context_length: contextLength } : {}),
    }));
  sendJson(ctx, 200, { models });
};
