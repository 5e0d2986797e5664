// End-to-end: a client's images and audio reach Ollama as the strings it sent, never read as file names.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { tempHome } from '../support/run-argo.js';
import { startServe } from '../support/run-serve.js';
import type { ServeProcess } from '../support/run-serve.js';
import { waitFor } from '../support/wait.js';

const ollama = await fakeOllamaPerFile();
let serve: ServeProcess;
/** A file whose absolute path is valid base64 (letters, digits and `/`, a multiple of 4 long), holding a marker. */
let pathShaped: string;
let parent: string;
const MARKER = 'SECRET-MARKER-FILE-CONTENT';

beforeAll(async () => {
  // Not the test run's temporary folder: its name has a `-`, which base64 has not.
  parent = mkdtempSync('/tmp/argoimg');
  const dir = join(parent, 'plain');
  mkdirSync(dir);
  const name = 'x'.repeat(4 - ((dir.length + 1) % 4)) + 'yyyy';
  pathShaped = join(dir, name);
  writeFileSync(pathShaped, MARKER);
  serve = await startServe({ home: tempHome(), host: ollama.url });
});
afterAll(async () => {
  await serve.stop();
  rmSync(parent, { recursive: true, force: true });
});
beforeEach(() => {
  ollama.requests.length = 0;
});

const chatBodies = (): { messages: { images?: string[] }[] }[] =>
  ollama.requests.filter((r) => r.path === '/api/chat').map((r) => JSON.parse(r.body) as { messages: { images?: string[] }[] });
const post = (path: string, body: unknown): Promise<Response> =>
  fetch(`${serve.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const looking = (part: Record<string, unknown>) => ({ model: 'argo', messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, part] }] });

it('a path-shaped base64 image or audio clip is sent to Ollama as given, not as the file it names', async () => {
  // Only meaningful if the temporary path really is base64: the server takes it as such.
  expect(pathShaped).toMatch(/^[A-Za-z0-9/]+$/);
  expect(pathShaped.length % 4).toBe(0);
  const parts = [
    { type: 'image_url', image_url: { url: `data:image/png;base64,${pathShaped}` } },
    { type: 'image_url', image_url: `data:;base64,${pathShaped}` },
    { type: 'input_audio', input_audio: { data: pathShaped, format: 'wav' } },
  ];
  for (const part of parts) expect((await post('/v1/chat/completions', looking(part))).status).toBe(200);
  expect(chatBodies().map((body) => body.messages.at(-1)?.images)).toEqual([[pathShaped], [pathShaped], [pathShaped]]);
  expect(ollama.requests.some((r) => r.body.includes(Buffer.from(MARKER).toString('base64')))).toBe(false);
});

it('a job\'s images go to Ollama as given too', async () => {
  const job = await post('/api/jobs', looking({ type: 'image_url', image_url: { url: `data:image/png;base64,${pathShaped}` } }));
  expect([job.status, await job.text()]).toEqual([202, expect.any(String)]);
  await waitFor(() => expect(chatBodies().map((body) => body.messages.at(-1)?.images)).toEqual([[pathShaped]]));
});
