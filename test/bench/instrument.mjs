// Preloaded into a measured process (node --import ./test/bench/instrument.mjs …): counts
// process.stdout.write calls and, at exit, writes them with the process's own CPU time and peak
// memory to the file named by ARGO_BENCH_REPORT. Plain JavaScript, so no loader runs in the process.
import { Buffer } from 'node:buffer';
import { writeFileSync } from 'node:fs';
import process from 'node:process';

const reportPath = process.env.ARGO_BENCH_REPORT;
if (reportPath) {
  delete process.env.ARGO_BENCH_REPORT;
  let writes = 0;
  let bytes = 0;
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout);
  stdout.write = (chunk, ...rest) => {
    writes++;
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    return write(chunk, ...rest);
  };
  process.on('exit', (code) => {
    const cpu = process.cpuUsage();
    const usage = process.resourceUsage();
    const report = {
      code,
      writes,
      bytes,
      userUs: cpu.user,
      systemUs: cpu.system,
      maxRssKb: usage.maxRSS,
      uptimeMs: process.uptime() * 1000,
    };
    writeFileSync(reportPath, JSON.stringify(report));
  });
}
