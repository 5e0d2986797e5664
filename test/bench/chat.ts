// Issue 10's figure: 20 turns through piped `argo chat` against 20 one-liners, same questions, same
// stand-in. Chat must take no longer in total, and its first byte per turn (first_token_ms, from the
// request to the first token, as each turn logs it) must be within 5 ms of the one-liners'.
//   node --import tsx test/bench/chat.ts        (after npm run build)
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { startFakeOllama } from '../support/fake-ollama.js';
import { ARGO_BIN, logLines, tempHome } from '../support/run-argo.js';

const TURNS = 20;
const questions = Array.from({ length: TURNS }, (_, i) => `Question number ${i + 1}: why is the sky blue?`);

function run(args: string[], home: string, host: string, stdin: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [ARGO_BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: home, ARGO_HOME: home, OLLAMA_HOST: host, NO_COLOR: '1' }, stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('error', reject).on('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`argo exited ${code}`))));
    child.stdin.end(stdin);
  });
}

const firstTokens = (home: string): number[] => logLines(home).map((line) => (line.timings as { first_token_ms: number }).first_token_ms);
const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

async function main(): Promise<void> {
  // Ten tokens per answer, 2 ms apart: a small local model's pace.
  const ollama = await startFakeOllama({ tokens: Array.from({ length: 10 }, (_, i) => ` t${i}`), scenario: { delayMs: 2 } });
  try {
    const rounds = 3;
    const results: { oneLiners: number; chat: number; oneFirst: number; chatFirst: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      const oneHome = tempHome();
      let oneLiners = 0;
      // --replay session in both, as chat replays the session by default: the same requests.
      for (const question of questions) oneLiners += await run(['-s', 'bench', '--replay', 'session', '--no-stdin', question], oneHome, ollama.url, '');
      const chatHome = tempHome();
      const chat = await run(['chat', '-s', 'bench'], chatHome, ollama.url, questions.map((question) => `${question}\n`).join(''));
      results.push({ oneLiners, chat, oneFirst: mean(firstTokens(oneHome)), chatFirst: mean(firstTokens(chatHome)) });
    }
    const best = (key: keyof (typeof results)[number]): number => Math.min(...results.map((result) => result[key]));
    const summary = {
      turns: TURNS,
      rounds,
      one_liners_total_ms: Math.round(best('oneLiners')),
      chat_total_ms: Math.round(best('chat')),
      one_liner_first_token_mean_ms: Number(best('oneFirst').toFixed(2)),
      chat_first_token_mean_ms: Number(best('chatFirst').toFixed(2)),
    };
    const totalOk = summary.chat_total_ms <= summary.one_liners_total_ms;
    const firstOk = summary.chat_first_token_mean_ms - summary.one_liner_first_token_mean_ms <= 5;
    console.log(JSON.stringify({ ...summary, chat_total_within_target: totalOk, first_token_within_5ms: firstOk }, null, 2));
    if (!totalOk || !firstOk) process.exitCode = 1;
  } finally {
    await ollama.close();
  }
}

await main();
