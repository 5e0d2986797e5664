// Model names as Ollama compares them.

/**
 * A model name as Ollama resolves it, for comparing: `[scheme://][host/][namespace/]model[:tag]`
 * with registry.ollama.ai, library and latest filled in, lower-cased (Ollama compares names
 * case-insensitively). So argo, argo:latest, library/argo and registry.ollama.ai/library/argo:latest
 * are one model, argo:7b another. A ':' is a tag only after the last '/' (`registry:5000/team/x`).
 */
export function fullModelName(name: string): string {
  let rest = name.trim().replace(/^https?:\/\//i, '');
  const at = rest.indexOf('@');
  if (at !== -1) rest = rest.slice(0, at); // a digest does not name a different model
  let tag = '';
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  const parts = rest.split('/');
  const model = parts.pop() ?? '';
  const namespace = parts.pop() ?? 'library';
  const host = parts.join('/') || 'registry.ollama.ai';
  return `${host}/${namespace}/${model}:${tag || 'latest'}`.toLowerCase();
}
