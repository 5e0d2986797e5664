// End-to-end: an OLLAMA_HOST that reaches something other than a plain Ollama (an https server Node
// does not trust, a plain-HTTP one asked over https) fails in words naming the fix, for a turn and doctor alike.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { Server } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { runArgo, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile();

describe('https', () => {
  let certDir: string;
  let server: Server;
  let https: string;

  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), 'argo-tls-'));
    // A self-signed certificate for "localhost", made for this run.
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
    server = createHttpsServer({ key: readFileSync(join(certDir, 'key.pem')), cert: readFileSync(join(certDir, 'cert.pem')) }, (_request, response) => response.end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    https = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(certDir, { recursive: true, force: true });
  });

  const UNTRUSTED = 'its TLS certificate is not trusted here: if it is yours, name it (or its CA) with NODE_EXTRA_CA_CERTS=file.pem';

  it('a self-signed certificate is named, with the setting that trusts it, for a turn and doctor', async () => {
    const home = tempHome();
    const turn = await runArgo(['--no-log', 'hi'], { home, host: https });
    expect([turn.code, turn.stderr]).toEqual([1, `argo: the connection to Ollama at ${https} failed before an answer (${UNTRUSTED})\n`]);
    const doctor = await runArgo(['doctor'], { home, host: https });
    expect(doctor.stdout).toContain(`FAIL  ollama     the connection to Ollama at ${https} failed before an answer (${UNTRUSTED})\n`);
  });

  it('a trusted certificate made for another name says so', async () => {
    const turn = await runArgo(['--no-log', 'hi'], { home: tempHome(), host: https, env: { NODE_EXTRA_CA_CERTS: join(certDir, 'cert.pem') } });
    expect([turn.code, turn.stderr]).toEqual([1, `argo: the connection to Ollama at ${https} failed before an answer (its TLS certificate is for another host name: use the name it was made for in the address)\n`]);
  });

  it('https:// to a plain-HTTP Ollama says to use http://', async () => {
    const host = ollama.url.replace(/^http:/, 'https:');
    const home = tempHome();
    const turn = await runArgo(['--no-log', 'hi'], { home, host });
    expect([turn.code, turn.stderr]).toEqual([1, `argo: the connection to Ollama at ${host} failed before an answer (it answers in plain HTTP, not HTTPS: use http:// in the address)\n`]);
    const doctor = await runArgo(['doctor'], { home, host });
    expect(doctor.stdout).toContain('(it answers in plain HTTP, not HTTPS: use http:// in the address)\n');
  });
});

describe('a redirect', () => {
  let server: HttpServer;
  let host: string;
  const asked: string[] = [];

  beforeAll(async () => {
    // A proxy that moved: every request is sent to the same path on another address.
    server = createHttpServer((request, response) => {
      asked.push(`${request.method ?? ''} ${request.url ?? ''}`);
      response.writeHead(request.url === '/api/chat' ? 307 : 301, { location: `https://ollama.example${request.url ?? ''}` }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('is not followed: a turn and doctor name where it points, exit 1', async () => {
    const home = tempHome();
    const turn = await runArgo(['--no-log', 'hi'], { home, host });
    expect([turn.code, turn.stderr]).toEqual([1, `argo: Ollama at ${host} answered with a redirect to https://ollama.example/api/chat; set --host / OLLAMA_HOST to https://ollama.example\n`]);
    expect(asked).toEqual(['POST /api/chat']);
    const doctor = await runArgo(['doctor'], { home, host });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(new RegExp(`FAIL  ollama     Ollama at ${host} answered with a redirect to https://ollama\\.example/api/\\w+; set --host / OLLAMA_HOST to https://ollama\\.example\n`));
  });
});
