// Model names as Ollama compares them.

/** A name's parts as Ollama reads them, before defaults: the tag is '' when the name gives none. */
function nameParts(name: string): { path: string; tag: string } {
  let rest = name.trim().replace(/^https?:\/\//i, '');
  const at = rest.indexOf('@');
  if (at !== -1) rest = rest.slice(0, at); // a digest does not name a different model
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) return { path: rest.slice(0, colon), tag: rest.slice(colon + 1) };
  return { path: rest, tag: '' };
}

/**
 * A model name as Ollama resolves it, for comparing: `[scheme://][host/][namespace/]model[:tag]`
 * with registry.ollama.ai, library and latest filled in, lower-cased (Ollama compares names
 * case-insensitively). So argo, argo:latest, library/argo and registry.ollama.ai/library/argo:latest
 * are one model, argo:7b another. A ':' is a tag only after the last '/' (`registry:5000/team/x`).
 */
export function fullModelName(name: string): string {
  const { path, tag } = nameParts(name);
  return `${fullModelPath(path)}:${tag || 'latest'}`.toLowerCase();
}

/** The model a name means, whatever its tag: fullModelName without `:tag` (`llama3` and `library/llama3:8b` are both registry.ollama.ai/library/llama3). */
export function fullModelPath(name: string): string {
  const parts = nameParts(name).path.split('/');
  const model = parts.pop() ?? '';
  const namespace = parts.pop() ?? 'library';
  const host = parts.join('/') || 'registry.ollama.ai';
  return `${host}/${namespace}/${model}`.toLowerCase();
}

/** Whether `name` gives a tag (`llama3:8b`) rather than leaving Ollama's implicit `latest`. */
export function namesTag(name: string): boolean {
  return nameParts(name).tag !== '';
}

/** Why a name is refused, for a client whose model name Ollama would not take. */
export const MODEL_NAME_RULE =
  'not a model name Ollama takes ([host/][namespace/]model[:tag], each part letters, digits, "_", "-" and ".", starting with a letter, digit or "_": no spaces, no empty part), e.g. llama3.2, qwen3:8b or team/coder:1.5b';

/**
 * Whether every Ollama takes `name` as a model name, as its chat and show routes check one: a
 * `:cloud`/`:local` source suffix left out, then types/model ParseName and IsValid (a part promised
 * by a ':' or '/' but empty is missing, never defaulted). Blanks at the ends are refused: recent
 * Ollama drops them, earlier ones refuse the name.
 */
export function isOllamaModelName(name: string): boolean {
  const source = /:(cloud|local)$/i;
  const base = name.replace(source, '');
  // Two suffixes (`x:cloud:local`) conflict.
  if (base !== name && source.test(base)) return false;
  const parts = parseNameBare(base);
  return parts !== null && isValidPart('host', parts.host ?? 'registry.ollama.ai') && isValidPart('namespace', parts.namespace ?? 'library') && isValidPart('model', parts.model) && isValidPart('tag', parts.tag ?? 'latest');
}

interface BareName {
  host?: string;
  namespace?: string;
  model: string;
  tag?: string;
}

/** Ollama's ParseNameBare; null when a promised part is empty (its MissingPart). */
function parseNameBare(text: string): BareName | null {
  let rest = text;
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (tag === '' || rest === '') return null;
  }
  const cut = (): [string, string] | null => {
    const at = rest.lastIndexOf('/');
    if (at === -1) return null;
    return [rest.slice(0, at), rest.slice(at + 1)];
  };
  const modelCut = cut();
  if (modelCut === null) return { model: rest, ...(tag !== undefined ? { tag } : {}) };
  const [beforeModel, model] = modelCut;
  if (beforeModel === '' || model === '') return null;
  rest = beforeModel;
  const namespaceCut = cut();
  if (namespaceCut === null) return { namespace: rest, model, ...(tag !== undefined ? { tag } : {}) };
  const [beforeNamespace, namespace] = namespaceCut;
  if (beforeNamespace === '' || namespace === '') return null;
  const scheme = beforeNamespace.indexOf('://');
  const host = scheme === -1 ? beforeNamespace : beforeNamespace.slice(scheme + 3);
  return { host, namespace, model, ...(tag !== undefined ? { tag } : {}) };
}

/** Ollama's isValidPart: 1–80 characters (a host 350) of [A-Za-z0-9_.-], first [A-Za-z0-9_]; a namespace no '.', a host ':' too. */
function isValidPart(kind: 'host' | 'namespace' | 'model' | 'tag', part: string): boolean {
  if (part.length < 1 || part.length > (kind === 'host' ? 350 : 80)) return false;
  const rest = kind === 'host' ? /^[A-Za-z0-9_.:-]*$/ : kind === 'namespace' ? /^[A-Za-z0-9_-]*$/ : /^[A-Za-z0-9_.-]*$/;
  return /^[A-Za-z0-9_]/.test(part) && rest.test(part.slice(1));
}
