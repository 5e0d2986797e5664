import { access, constants } from 'node:fs/promises';
import { loadSettings } from '../config/settings.js';
import type { FlagOverrides } from '../config/settings.js';
import { ArgoError } from '../errors.js';
import { ensurePrivateDir } from '../log/files.js';
import { OllamaTransport } from '../ollama/transport.js';
import type { Io } from './io.js';

/** Checks each piece argo needs, one line each; exit 1 if any fails. */
export async function doctor(flags: FlagOverrides, io: Io): Promise<number> {
  let failed = 0;
  const report = (ok: boolean, what: string, detail: string): void => {
    if (!ok) failed++;
    io.stdout.write(`${ok ? 'ok  ' : 'FAIL'}  ${what.padEnd(10)} ${detail}\n`);
  };
  let settings;
  try {
    settings = loadSettings(flags, process.env);
    report(true, 'config', `${settings.paths.config} (or defaults)`);
  } catch (error) {
    report(false, 'config', error instanceof ArgoError ? error.message : String(error));
    return 1;
  }
  try {
    await ensurePrivateDir(settings.paths.logs);
    await ensurePrivateDir(settings.paths.sessions);
    await access(settings.paths.logs, constants.W_OK);
    await access(settings.paths.sessions, constants.W_OK);
    report(true, 'data', `${settings.home} is writable`);
  } catch (error) {
    report(false, 'data', `${settings.home} is not writable (${(error as Error).message}); choose another with --home or ARGO_HOME`);
  }
  const transport = new OllamaTransport({ host: settings.host, attempts: 1, initialDelayMs: 0, idleMs: settings.timeouts.idleMs });
  try {
    report(true, 'ollama', `Ollama ${await transport.version()} at ${settings.host}`);
  } catch (error) {
    report(false, 'ollama', `cannot reach Ollama at ${settings.host} (${(error as Error).message}); start it with "ollama serve" or set --host / OLLAMA_HOST`);
    return 1;
  }
  try {
    const installed = await transport.installedModels();
    const wanted = settings.model.includes(':') ? settings.model : `${settings.model}:latest`;
    const found = installed.some((name) => name.toLowerCase() === wanted.toLowerCase());
    report(
      found,
      'model',
      found
        ? `${settings.model} is installed`
        : `${settings.model} is not installed (installed: ${installed.join(', ') || 'none'}); run "ollama create argo -f docs/Modelfile" or "ollama pull ${settings.model}", or use --model`,
    );
    if (found) {
      const capabilities = await transport.capabilities(settings.model);
      const endpointOk = settings.api === 'generate' || capabilities.length === 0 || capabilities.includes('completion');
      report(endpointOk, 'endpoint', `/api/${settings.api} (model capabilities: ${capabilities.join(', ') || 'unknown'})`);
    }
  } catch (error) {
    report(false, 'model', `cannot list models (${(error as Error).message})`);
  }
  return failed === 0 ? 0 : 1;
}
