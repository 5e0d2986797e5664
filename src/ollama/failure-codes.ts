// One word for each way a turn's request failed, for scripts to branch on instead of the English
// message: argo serve's error `code` (src/serve/errors.ts picks the HTTP status by it) and the CLI's
// `--json` `error_code` (src/turn/error-code.ts) are both this.

/** How a request failed: the transport's kind (FailureKind), or `argo` for the turn's own failure (a result it could not save, a memo it could not read). */
export interface CodedFailure {
  kind: string;
  httpStatus?: number | undefined;
}

export function failureCode({ kind, httpStatus }: CodedFailure): string {
  switch (kind) {
    case 'model-missing':
      return 'model_not_found';
    case 'busy':
      // A rate limit Ollama passed on (a cloud model's), as OpenAI names it.
      return httpStatus === 429 ? 'rate_limit_exceeded' : 'ollama_busy';
    case 'idle':
      return 'ollama_timeout';
    case 'unreachable':
      return 'ollama_unreachable';
    case 'too-old':
      return 'ollama_too_old';
    case 'argo':
      return 'argo_error';
    case 'http':
      // Ollama's own 400s (a model without chat or tools support) are the caller's to fix.
      return httpStatus === 400 ? 'ollama_rejected' : 'ollama_error';
    default:
      return `ollama_${kind.replace(/-/g, '_')}`;
  }
}
