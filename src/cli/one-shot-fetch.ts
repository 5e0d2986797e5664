import { setFlagsFromString } from 'node:v8';

/**
 * The fetch for commands that talk to Ollama and then exit. undici parses HTTP with a WebAssembly
 * module that V8 compiles twice: quickly, then optimized on a background thread, and the process
 * waits for that second compile before it can exit (about 50 ms on every run). A command that exits
 * after one answer never gains from it, so its parser is compiled once. `argo serve`, which parses
 * responses for hours, keeps V8's default.
 *
 * The flag is set at the first request, after `fetch` is resolved: resolving it loads undici, and
 * loading it after a flag change would miss Node's compiled-code cache for it (slower, not faster).
 */
export function oneShotFetch(resolveFetch: () => typeof fetch = () => globalThis.fetch, setFlags: (flags: string) => void = setFlagsFromString): typeof fetch {
  let base: typeof fetch | null = null;
  return (input, init) => {
    if (base === null) {
      base = resolveFetch();
      setFlags('--liftoff-only');
    }
    return base(input, init);
  };
}
