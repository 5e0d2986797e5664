// Text for synthetic history: prompts of every entry type and responses of varied length and shape
// (prose, lists, code with quotes and backslashes, non-ASCII text), drawn with a seeded generator so
// the same parameters always give the same bytes.

export type Random = () => number;

/** mulberry32: small, fast, good enough to vary synthetic text. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

/** Log-normal length around `median`, clamped: most answers are short, a few are very long. */
export function lengthAround(random: Random, median: number, sigma: number, min: number, max: number): number {
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return Math.max(min, Math.min(max, Math.round(median * Math.exp(sigma * normal))));
}

/** A word planted in a known share of turns so `argo logs -q` and grep have something to find. */
export const NEEDLE = 'argonaut';

const TECH = [
  'TypeScript', 'Rust', 'Go', 'Python', 'Postgres', 'SQLite', 'Kubernetes', 'nginx', 'bash', 'git',
  'Docker', 'React', 'Node.js', 'systemd', 'Terraform', 'Redis', 'Kafka', 'zsh', 'awk', 'jq', 'C++',
  'Elixir', 'Haskell', 'Vim', 'Emacs', 'Linux', 'macOS', 'WebAssembly', 'gRPC', 'OpenSSL',
];
const CONCEPTS = [
  'borrow checking', 'async iterators', 'back-pressure', 'connection pooling', 'a B-tree index',
  'optimistic locking', 'the event loop', 'tail calls', 'memory-mapped files', 'copy-on-write',
  'structured concurrency', 'exponential backoff', 'consistent hashing', 'a write-ahead log',
  'generics', 'type narrowing', 'closures', 'lifetimes', 'goroutines', 'the GIL', 'zero-copy reads',
  'rebasing', 'cgroups', 'TLS session resumption', 'NDJSON framing', 'UTF-8 decoding',
];
const TASKS = [
  'read a file line by line', 'parse command-line flags', 'retry a failed request', 'tail a log',
  'stream a large JSON array', 'sort a CSV by the third column', 'find the biggest files in a tree',
  'squash the last three commits', 'profile a slow query', 'limit memory of a container',
  'rotate logs every day', 'cancel a running request', 'watch a directory for changes',
  'deduplicate lines without sorting', 'cache HTTP responses', 'write a unit test for a timer',
  'convert a date to ISO 8601 with an offset', 'read stdin when it is not a terminal',
];
const THINGS = [
  'my build', 'the migration', 'this regex', 'the Docker image', 'the test suite', 'the cron job',
  'my SSH key', 'the CI pipeline', 'this query', 'the websocket', 'the release script', 'pnpm install',
];
const FAILURES = [
  'hang forever', 'fail with EACCES', 'use 4 GB of RAM', 'time out after 30s', 'print garbage',
  'segfault on ARM', 'skip the first line', 'return an empty array', 'lose the last byte',
];
const LANGS = ['TypeScript', 'Python', 'Rust', 'Go', 'bash', 'SQL', 'Ruby', 'Java'];
const FOREIGN = [
  'Pourriez-vous expliquer la différence entre « fork » et « clone » ?',
  'Wie lösche ich alle gestoppten Container auf einmal?',
  'このエラーメッセージの意味を教えてください。',
  '如何在 Git 中撤销最后一次提交？',
  '¿Cómo configuro la zona horaria en el servidor?',
  'Какой размер буфера лучше для чтения файла?',
];

type Template = (random: Random) => string;

const QUESTIONS: Template[] = [
  (r) => `How do I ${pick(r, TASKS)} in ${pick(r, TECH)}?`,
  (r) => `What is the difference between ${pick(r, CONCEPTS)} and ${pick(r, CONCEPTS)}?`,
  (r) => `Why does ${pick(r, THINGS)} ${pick(r, FAILURES)} when I run it in ${pick(r, TECH)}?`,
  (r) => `which ${pick(r, TECH)} version added support for ${pick(r, CONCEPTS)}`,
  (r) => `is it safe to ${pick(r, TASKS)} from two processes at once?`,
  (r) => `When should I prefer ${pick(r, TECH)} over ${pick(r, TECH)} for ${pick(r, CONCEPTS)}?`,
  (r) => `where does ${pick(r, TECH)} keep its config on a fresh install?`,
  (r) => pick(r, FOREIGN),
  (r) => `what's a good way to ${pick(r, TASKS)}? I tried "${pick(r, TASKS)}" but ${pick(r, THINGS)} started to ${pick(r, FAILURES)}.`,
];
const INSTRUCTIONS: Template[] = [
  (r) => `Explain ${pick(r, CONCEPTS)} in ${pick(r, TECH)} with a short example`,
  (r) => `Write a ${pick(r, LANGS)} function that can ${pick(r, TASKS)}`,
  (r) => `please refactor this so it does not ${pick(r, FAILURES)}:\n\n${pick(r, CODE)}`,
  (r) => `List the pros and cons of ${pick(r, TECH)} for ${pick(r, CONCEPTS)}`,
  (r) => `Review this diff:\n\n${pick(r, DIFFS)}`,
  (r) => `Summarize this for a changelog: ${paragraph(r, 3)}`,
  (r) => `translate to German: "${pick(r, PROSE)}"`,
  (r) => `Give me a one-liner to ${pick(r, TASKS)}`,
  (r) => `Now add error handling and make it ${pick(r, ['faster', 'shorter', 'testable', 'async', 'safer'])}`,
  (r) => `Fix this error:\n${pick(r, ERRORS)}`,
  (r) => `Compare ${pick(r, TECH)} and ${pick(r, TECH)} step by step`,
];
const CORRECTIONS: Template[] = [
  (r) => `Actually I meant ${pick(r, TECH)}, not ${pick(r, TECH)}.`,
  (r) => `That's wrong: ${pick(r, THINGS)} does not ${pick(r, FAILURES)} on my machine`,
  (r) => `no, I mean the version that can ${pick(r, TASKS)}`,
  () => `you made a mistake in the second line, the flag is --no-verify`,
  (r) => `correction: it's ${pick(r, CONCEPTS)} I'm asking about`,
];
const META: Template[] = [
  () => 'What did you say about the timeout?',
  () => 'summarize our conversation so far',
  () => 'repeat that',
  () => 'What was my last question?',
  () => 'what were we talking about before the break?',
];
const OTHER: Template[] = [
  () => 'ok thanks', () => 'great, that worked', () => 'hmm', () => 'perfect 👍', () => 'merci beaucoup',
  () => 'lgtm', () => 'interesting', () => 'nice — ship it',
  (r) => `${pick(r, THINGS)} is still broken`,
  (r) => `The output was ${Math.floor(r() * 10_000)} lines, as expected.`,
];

// Weights roughly as people type: mostly questions and instructions.
const PROMPT_KINDS: [number, Template[]][] = [
  [0.42, QUESTIONS],
  [0.36, INSTRUCTIONS],
  [0.08, CORRECTIONS],
  [0.04, META],
  [0.1, OTHER],
];

const PROSE = [
  'The short answer is that the default buffer is too small for lines this long.',
  'Start by checking whether the process is actually blocked on I/O or spinning on the CPU.',
  'In most setups the simplest fix is to raise the limit and restart the service.',
  'This works because the kernel keeps the pages cached after the first read.',
  'Note that the behaviour changed in the last major release, so check your version first.',
  'If you need ordering guarantees, a single writer with a queue is easier to reason about.',
  'You can confirm it with `strace -f -e trace=openat,read` and look for the failing call.',
  'The error means the file descriptor was closed before the write completed.',
  'Keep the parsing pure and push the I/O to the edges; the tests get much simpler.',
  'A common pitfall is forgetting that the callback runs after the function has returned.',
  'Backslashes in Windows paths like C:\\Users\\me\\project need escaping in JSON strings.',
  'Quote the variable ("$file") so names with spaces survive word splitting.',
  'For a tab-separated file, set the field separator explicitly:\tawk -F\'\\t\'.',
  'Memory stays flat because only one chunk is held at a time, whatever the file size.',
  'That flag was deprecated; the replacement accepts a duration such as 10m or 2h.',
  'The index is only a hint: every read verifies the id before trusting the line.',
  'Exponential backoff doubles the delay after each failure, up to a fixed number of attempts.',
  'Use a prepared statement here; string concatenation invites SQL injection.',
  'On Linux, pipes are written synchronously by Node, so many small writes cost real syscalls.',
  'The migration is safe to rerun because every step checks whether it has already been applied.',
  'Ce n’est pas un bug : la valeur par défaut a changé dans la version 2.',
  'Die Konfiguration wird beim Start einmal gelesen und danach nicht mehr geändert.',
  '設定ファイルを変更した後はサービスを再起動してください。',
  '这个错误通常是权限问题导致的，请检查目录的所有者。',
  'Think of it as a bounded queue: producers wait when it is full, consumers when it is empty.',
  'If the test is flaky, inject the clock instead of sleeping for real time.',
  'Both approaches are O(n), but the second allocates far less.',
  'The trailing newline matters: tools like wc -l count newline characters, not lines.',
  'Pin the dependency to a minor version and let the lockfile do the rest.',
  'The response is streamed as NDJSON, one object per line, with a final object marked done.',
];
const BULLETS = [
  '- check the permissions of the data directory (0700)',
  '- run the command with `--verbose` and read the first error, not the last',
  '- make sure the service listens on 127.0.0.1 and not only on ::1',
  '- keep one connection alive instead of reconnecting for every request',
  '- prefer `git switch` over `git checkout` for branches',
  '1. stop the service\n2. back up the database\n3. run the migration\n4. start it again',
  '* **Pros:** fast, simple, well documented\n* **Cons:** no streaming, large memory footprint',
  '| option | default |\n|---|---|\n| timeout | 30s |\n| retries | 3 |',
];
const CODE = [
  '```ts\nexport async function* lines(path: string): AsyncGenerator<string> {\n  const handle = await open(path);\n  for await (const line of handle.readLines()) yield line;\n}\n```',
  '```python\nwith open("data.csv", newline="") as f:\n    rows = sorted(csv.reader(f), key=lambda r: r[2])\nprint(f"{len(rows)} rows")\n```',
  '```bash\nfind . -type f -printf \'%s\\t%p\\n\' | sort -nr | head -20\n```',
  '```rust\nfn parse(line: &str) -> Result<Entry, Error> {\n    serde_json::from_str(line).map_err(|e| Error::Parse { line: line.into(), source: e })\n}\n```',
  '```go\nfor i := 0; i < attempts; i++ {\n\tif err = call(ctx); err == nil {\n\t\treturn nil\n\t}\n\ttime.Sleep(delay << i)\n}\n```',
  '```sql\nSELECT session, count(*) AS turns\nFROM log\nWHERE status = \'ok\'\nGROUP BY session\nORDER BY turns DESC;\n```',
  '```js\nconst re = /^(\\d{4})-(\\d{2})-(\\d{2})$/;\nconsole.log("match:", re.test("2024-01-31"));\n```',
  '```json\n{ "model": "llama3.1", "stream": true, "options": { "temperature": 0.2 } }\n```',
  '```bash\ngit rebase -i HEAD~3   # mark the last two as "squash"\n```',
  '```ts\nconst timer = setTimeout(() => controller.abort(), 30_000);\ntry {\n  return await fetch(url, { signal: controller.signal });\n} finally {\n  clearTimeout(timer);\n}\n```',
];
const DIFFS = [
  '```diff\n-  const data = await readFile(path, "utf8");\n-  return data.split("\\n");\n+  return readLines(path);\n```',
  '```diff\n@@ -12,7 +12,7 @@\n-    retries: 1,\n+    retries: 3,\n     timeout: 30_000,\n```',
];
const ERRORS = [
  'Error: EACCES: permission denied, open \'/var/log/app/2024-01-31.log\'',
  'TypeError: Cannot read properties of undefined (reading \'map\')\n    at render (src/view.ts:42:17)',
  'thread \'main\' panicked at \'called `Result::unwrap()` on an `Err` value: Os { code: 2 }\'',
  'fatal: refusing to merge unrelated histories',
  'ERROR:  duplicate key value violates unique constraint "users_email_key"',
];

function paragraph(random: Random, sentences: number): string {
  const parts: string[] = [];
  for (let i = 0; i < sentences; i++) parts.push(pick(random, PROSE));
  return parts.join(' ');
}

/** A prompt, sometimes with pasted material; `plant` adds the needle word. */
export function makePrompt(random: Random, plant: boolean): string {
  let roll = random();
  let templates = OTHER;
  for (const [weight, kind] of PROMPT_KINDS) {
    if (roll < weight) {
      templates = kind;
      break;
    }
    roll -= weight;
  }
  let text = pick(random, templates)(random);
  // Some prompts carry a long paste (a log excerpt, a file) after the question.
  if (random() < 0.02) text += `\n\n${responseText(random, lengthAround(random, 900, 0.7, 200, 6000))}`;
  if (plant) text += random() < 0.5 ? ` (this is for the ${NEEDLE} cluster)` : ` — same issue on Argonaut`;
  return text;
}

/** A response of roughly `length` characters, assembled from whole pieces (never a cut character). */
export function responseText(random: Random, length: number): string {
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const roll = random();
    const part = roll < 0.62 ? pick(random, PROSE) : roll < 0.8 ? pick(random, BULLETS) : roll < 0.97 ? pick(random, CODE) : pick(random, DIFFS);
    parts.push(part);
    size += part.length + 2;
  }
  return parts.join(random() < 0.5 ? '\n\n' : ' ');
}

export function plantInResponse(text: string, random: Random): string {
  return random() < 0.5 ? `${text}\n\nOn the ${NEEDLE} hosts the same setting applies.` : `Argonaut note: ${text}`;
}
