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
