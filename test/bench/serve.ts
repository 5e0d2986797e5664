// Issue 12: `argo serve` against the same requests sent straight to the Ollama stand-in, same run.
//
// Both the stand-in and the server run as their own processes; the bench is the client, over
// kept-alive HTTP connections, reading each body as it arrives. Requests alternate between the two
// paths so load on the machine falls on both alike. The server runs in plain mode (the client's
// messages as they are), so both paths send Ollama the same body; the server also logs every turn.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { ARGO_BIN, REPO, cleanEnv } from './process.js';
import type { Row } from './report.js';
import { round, summarize } from './stats.js';
import type { Summary } from './stats.js';

const PROMPT = 'write a haiku about the sea';
const TOKENS = 300;
/** A stream paced like a (very fast) model: one token per millisecond. */
const PACED_DELAY_MS = 1;
const CONCURRENCY = 50;

export interface ServeBenchCounts {
  /** Sequential paced streams per path (TTFB and full stream). */
  sequential: number;
  /** Requests per path in the concurrent run; the server's RSS is sampled across them. */
  concurrentRequests: number;
}

export interface ServeResult {
  tokens: number;
  pacedDelayMs: number;
  firstByte: { direct: Summary; serve: Summary; diffMedianMs: number };
  paced: { direct: Summary; serve: Summary; ratioMedian: number };
  unpaced: { direct: Summary; serve: Summary; ratioMedian: number };
  concurrent: { clients: number; requests: number; directTokensPerS: number; serveTokensPerS: number; ratio: number };
  concurrentPaced: { clients: number; requests: number; directTokensPerS: number; serveTokensPerS: number; ratio: number };
  /** Over the first concurrent run: the server warming up (V8 sizing its heap for the load). */
  warmUpRss: { samplesMb: number[]; growthPct: number };
  /** Over as many requests again, right after: what a leak would show as growth. */
  /** The second run's samples; warmMb and endMb are the two runs' peaks. */
  rss: { samplesMb: number[]; warmMb: number; endMb: number; growthPct: number };
}

interface Spawned {
  url: string;
  child: ChildProcess;
}

export function spawnListening(args: string[], env: Record<string, string> | undefined, pattern: RegExp): Promise<Spawned> {
  const child = spawn(process.execPath, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      const url = pattern.exec(line)?.[1];
      if (url) resolve({ url, child });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited early (${code})`)));
  });
}

const standIn = (delayMs: number): Promise<Spawned> =>
  spawnListening(['--import', 'tsx', 'test/support/fake-ollama.ts', '--port', '0', '--tokens', String(TOKENS), '--delay-ms', String(delayMs)], undefined, /^listening (\S+)/);

export function stop(spawned: Spawned): Promise<void> {
  return new Promise((resolve) => {
    if (spawned.child.exitCode !== null) {
      resolve();
      return;
    }
    spawned.child.once('exit', () => resolve());
    spawned.child.kill('SIGTERM');
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

interface Timing {
  firstByteMs: number;
  totalMs: number;
  bytes: number;
}

/** One POST, read to the end; times from just before the request to its first and last body byte. */
function timedPost(url: string, body: string): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstByteMs = Number.NaN;
    let bytes = 0;
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${url} answered ${res.statusCode}`));
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - started;
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ firstByteMs, totalMs: performance.now() - started, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

type Path = 'direct' | 'serve';

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return round(kb / 1024, 1);
}

export async function benchServe(counts: ServeBenchCounts, progress: (message: string) => void): Promise<{ result: ServeResult; rows: Row[] }> {
  const home = mkdtempSync(join(tmpdir(), 'argo-bench-serve-'));
  const paced = await standIn(PACED_DELAY_MS);
  const unpaced = await standIn(0);
  const servers: Spawned[] = [];
  const startServe = async (ollama: string): Promise<Spawned> => {
    const server = await spawnListening([ARGO_BIN, 'serve', '--port', '0'], cleanEnv(home, { OLLAMA_HOST: ollama }), /listening on (\S+)/);
    servers.push(server);
    return server;
  };
  try {
    const servePaced = await startServe(paced.url);
    const serveUnpaced = await startServe(unpaced.url);
    const ollamaBody = JSON.stringify({ model: 'argo', messages: [{ role: 'user', content: PROMPT }], stream: true });
    const openAiBody = JSON.stringify({ model: 'argo', messages: [{ role: 'user', content: PROMPT }], stream: true });
    const target = (path: Path, ollama: Spawned, server: Spawned): [string, string] =>
      path === 'direct' ? [`${ollama.url}/api/chat`, ollamaBody] : [`${server.url}/v1/chat/completions`, openAiBody];

    const alternate = async (count: number, label: string, ollama: Spawned, server: Spawned): Promise<Record<Path, Timing[]>> => {
      const timings: Record<Path, Timing[]> = { direct: [], serve: [] };
      for (let i = 0; i < count; i++) {
        const order: Path[] = i % 2 === 0 ? ['direct', 'serve'] : ['serve', 'direct'];
        for (const path of order) timings[path].push(await timedPost(...target(path, ollama, server)));
        if ((i + 1) % 25 === 0 || i + 1 === count) progress(`${label}: ${i + 1}/${count}`);
      }
      return timings;
    };

    // Warm up both paths (JIT, connections, the server's first log write).
    await alternate(10, 'warm-up', unpaced, serveUnpaced);
    const pacedRuns = await alternate(counts.sequential, `${TOKENS} tokens at ${PACED_DELAY_MS} ms/token`, paced, servePaced);
    const unpacedRuns = await alternate(counts.sequential, `${TOKENS} tokens, unpaced`, unpaced, serveUnpaced);

    // 50 clients at once, each sending its share one after another; direct first, then through the server.
    const concurrent = async (path: Path, ollama: Spawned, server: Spawned, requests: number, label: string): Promise<{ tokensPerS: number; samples: number[] }> => {
      const samples: number[] = [];
      const every = Math.max(1, Math.floor(requests / 10));
      let sent = 0;
      let done = 0;
      const started = performance.now();
      const worker = async (): Promise<void> => {
        while (sent < requests) {
          sent++;
          await timedPost(...target(path, ollama, server));
          done++;
          if (path === 'serve' && done % every === 0) samples.push(rssMb(server.child.pid ?? 0));
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      const seconds = (performance.now() - started) / 1000;
      progress(`${CONCURRENCY} concurrent clients, ${label}, ${path}: ${requests} requests in ${seconds.toFixed(1)} s`);
      return { tokensPerS: round((requests * TOKENS) / seconds, 0), samples };
    };
    const direct = await concurrent('direct', unpaced, serveUnpaced, counts.concurrentRequests, 'unpaced');
    const served = await concurrent('serve', unpaced, serveUnpaced, counts.concurrentRequests, 'unpaced');
    // The same against a stand-in paced like a model: what a proxy's clients see, rather than the
    // server's CPU cost per token against a stand-in that does next to nothing per token.
    const pacedRequests = Math.max(CONCURRENCY, Math.floor(counts.concurrentRequests / 4));
    const pacedDirect = await concurrent('direct', paced, servePaced, pacedRequests, `${PACED_DELAY_MS} ms/token`);
    const pacedServed = await concurrent('serve', paced, servePaced, pacedRequests, `${PACED_DELAY_MS} ms/token`);
    // The first run warmed the server up; the same load again shows whether memory keeps growing.
    const steady = await concurrent('serve', unpaced, serveUnpaced, counts.concurrentRequests, 'unpaced, after warm-up');
    const samples = steady.samples;
    // Peak against peak: a sample taken just after a collection shrank the heap says nothing about a
    // leak, while a leak raises every peak. The second run's peak is compared with the first run's.
    const warm = Math.max(...served.samples);
    const end = Math.max(...samples);
    const growth = (from: number, to: number): number => round(((to - from) / from) * 100, 1);

    const summary = (timings: Timing[], key: 'firstByteMs' | 'totalMs'): Summary => summarize(timings.map((timing) => timing[key]));
    const result: ServeResult = {
      tokens: TOKENS,
      pacedDelayMs: PACED_DELAY_MS,
      firstByte: {
        direct: summary(pacedRuns.direct, 'firstByteMs'),
        serve: summary(pacedRuns.serve, 'firstByteMs'),
        diffMedianMs: 0,
      },
      paced: { direct: summary(pacedRuns.direct, 'totalMs'), serve: summary(pacedRuns.serve, 'totalMs'), ratioMedian: 0 },
      unpaced: { direct: summary(unpacedRuns.direct, 'totalMs'), serve: summary(unpacedRuns.serve, 'totalMs'), ratioMedian: 0 },
      concurrent: {
        clients: CONCURRENCY,
        requests: counts.concurrentRequests,
        directTokensPerS: direct.tokensPerS,
        serveTokensPerS: served.tokensPerS,
        ratio: round(served.tokensPerS / direct.tokensPerS, 3),
      },
      concurrentPaced: {
        clients: CONCURRENCY,
        requests: pacedRequests,
        directTokensPerS: pacedDirect.tokensPerS,
        serveTokensPerS: pacedServed.tokensPerS,
        ratio: round(pacedServed.tokensPerS / pacedDirect.tokensPerS, 3),
      },
      warmUpRss: { samplesMb: served.samples, growthPct: growth(served.samples[0] ?? Number.NaN, served.samples.at(-1) ?? Number.NaN) },
      rss: { samplesMb: samples, warmMb: warm, endMb: end, growthPct: growth(warm, end) },
    };
    result.firstByte.diffMedianMs = round(result.firstByte.serve.median - result.firstByte.direct.median);
    result.paced.ratioMedian = round(result.paced.serve.median / result.paced.direct.median, 3);
    result.unpaced.ratioMedian = round(result.unpaced.serve.median / result.unpaced.direct.median, 3);
    return { result, rows: serveRows(result) };
  } finally {
    await Promise.all([...servers, paced, unpaced].map(stop));
    agent.destroy();
    rmSync(home, { recursive: true, force: true });
  }
}

function serveRows(r: ServeResult): Row[] {
  const section = `argo serve vs the stand-in directly (issue 12; ${r.tokens}-token answers, plain mode, every turn logged)`;
  const ms = (summary: Summary): string => `${summary.median} ms (p90 ${summary.p90})`;
  return [
    {
      section,
      measure: `time to first byte, ${r.pacedDelayMs} ms/token stream`,
      argo: ms(r.firstByte.serve),
      reference: ms(r.firstByte.direct),
      comparison: `+${r.firstByte.diffMedianMs} ms`,
      target: '≤ +3 ms median',
      pass: r.firstByte.diffMedianMs <= 3,
    },
    {
      section,
      measure: `full stream, ${r.pacedDelayMs} ms/token`,
      argo: ms(r.paced.serve),
      reference: ms(r.paced.direct),
      comparison: `${r.paced.ratioMedian}×`,
      target: '≤ 1.1×',
      pass: r.paced.ratioMedian <= 1.1,
    },
    {
      section,
      measure: 'full stream, unpaced (stand-in as fast as it can write)',
      argo: ms(r.unpaced.serve),
      reference: ms(r.unpaced.direct),
      comparison: `${r.unpaced.ratioMedian}×`,
      target: 'reported',
      pass: null,
      note: 'the server parses, re-encodes and logs every answer; unpaced, that is all there is to measure',
    },
    {
      section,
      measure: `${r.concurrent.clients} concurrent streams, throughput`,
      argo: `${r.concurrent.serveTokensPerS} tok/s`,
      reference: `${r.concurrent.directTokensPerS} tok/s`,
      comparison: `${r.concurrent.ratio}×`,
      target: '≥ 0.9×',
      pass: r.concurrent.ratio >= 0.9,
    },
    {
      section,
      measure: `${r.concurrentPaced.clients} concurrent streams at ${r.pacedDelayMs} ms/token, throughput`,
      argo: `${r.concurrentPaced.serveTokensPerS} tok/s`,
      reference: `${r.concurrentPaced.directTokensPerS} tok/s`,
      comparison: `${r.concurrentPaced.ratio}×`,
      target: 'reported',
      pass: null,
      note: `${r.concurrentPaced.requests} requests per path; the unpaced row above compares the server's CPU per token with a stand-in that spends next to none`,
    },
    {
      section,
      measure: `server RSS over the first ${r.concurrent.requests} concurrent requests (warm-up)`,
      argo: `${r.warmUpRss.samplesMb[0] ?? '?'} → ${r.warmUpRss.samplesMb.at(-1) ?? '?'} MB`,
      reference: r.warmUpRss.samplesMb.join(' '),
      comparison: `${r.warmUpRss.growthPct >= 0 ? '+' : ''}${r.warmUpRss.growthPct}%`,
      target: 'reported',
      pass: null,
      note: 'V8 sizes its heap for the load here; the row below is the leak check',
    },
    {
      section,
      measure: `server RSS, peak over the next ${r.concurrent.requests} concurrent requests vs the warm-up's peak`,
      argo: `${r.rss.warmMb} → ${r.rss.endMb} MB`,
      reference: r.rss.samplesMb.join(' '),
      comparison: `${r.rss.growthPct >= 0 ? '+' : ''}${r.rss.growthPct}%`,
      target: 'flat (≤ +10% after warm-up)',
      pass: r.rss.growthPct <= 10,
    },
  ];
}
