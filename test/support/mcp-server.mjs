// A tiny MCP server over stdio, written with the official SDK, for tests: `add` (read-only),
// `shout` (an error result when told to), `attach` (embedded resources, an image, resource links)
// and `crash` (the server exits with code 7, first writing ARGO_TEST_MCP_CRASH_SAYS on stderr when
// that is set). Plain JavaScript so it starts without a compiler.
// With ARGO_TEST_MCP_STARTS set, each start appends its pid to that file (how often was it started?).
// ARGO_TEST_MCP_FAIL: it writes a coloured line on stderr and exits with code 3 at once
// (ARGO_TEST_MCP_FAIL_SAYS, when set, is what it writes instead).
// ARGO_TEST_MCP_MALFORMED: its list also holds a tool whose inputSchema has no "type": "object".
// ARGO_TEST_MCP_RAW_ERROR: every call is answered with a JSON-RPC error of that text (not a tool's
// error result), so the client throws: an unexpected exception whose raw text only the log keeps.
// ARGO_TEST_MCP_SHOUT_SAYS: what `shout`'s error result says when told to fail (default "shouting
// is not allowed"), for a message such as "Authentication is required to read acme/app".
// ARGO_TEST_MCP_UNREADABLE: its list also holds `lookup`, whose inputSchema follows MCP but not what
// Ollama can read (a draft-03 `"required": true` inside a property, where Ollama's Go type wants a list).
// ARGO_TEST_MCP_NO_TOOLS: it offers no tools: "capability", resources alone (no tools capability);
// "empty", the tools capability with an empty list.
// ARGO_TEST_MCP_TWICE: its list names `add` a second time.
// ARGO_TEST_MCP_BAD_OUTPUT: its list also holds `status`, whose outputSchema does not compile ("type": "strin").
// ARGO_TEST_MCP_SLUG: its list also holds `slug`, whose outputSchema has a pattern a backtracking engine
// takes minutes on, and every call answers a structured result that pattern does not match.
// ARGO_TEST_MCP_BARE: its list also holds `ping`, whose inputSchema is `{"type": "object"}` alone.
// ARGO_TEST_MCP_PAGES: its list comes a tool per page (nextCursor); "loop" sends the same cursor
// for ever, "endless" a new one for ever.
// ARGO_TEST_MCP_WAIT (a file): it also offers `wait`, which never answers; each call first appends the pid to the file.
// ARGO_TEST_MCP_HANG: it never answers initialize (its pid goes to ARGO_TEST_MCP_STARTS first);
// "list": it answers initialize, never tools/list.
// ARGO_TEST_MCP_STAYS: it stays when its stdin closes, and ignores SIGTERM: only SIGKILL ends it.
// ARGO_TEST_MCP_ORPHAN (a file): as it starts, it leaves a process out of its group (setsid) that
// holds its stdout and stderr for 60 s; that process's pid goes to the file.
// ARGO_TEST_MCP_HUGE: a message past the 10 MB a client reads: "call" adds `huge`, whose result is
// 12 MB of text; "list", a tool whose description is; "line", 11 MB on stdout at start, no line break.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import process from 'node:process';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListResourcesRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

if (process.env.ARGO_TEST_MCP_ORPHAN) {
  const orphan = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 60_000)'], { detached: true, stdio: ['ignore', 'inherit', 'inherit'] });
  appendFileSync(process.env.ARGO_TEST_MCP_ORPHAN, `${orphan.pid}\n`);
  orphan.unref();
}
const started = () => {
  if (process.env.ARGO_TEST_MCP_STARTS) appendFileSync(process.env.ARGO_TEST_MCP_STARTS, `${process.pid}\n`);
};
const hang = process.env.ARGO_TEST_MCP_HANG;
if (process.env.ARGO_TEST_MCP_STAYS || (hang && hang !== 'list')) {
  process.on('SIGTERM', () => undefined);
  globalThis.setInterval(() => undefined, 60_000);
}
if (hang && hang !== 'list') {
  // Reads its requests and answers none.
  process.stdin.resume();
  started();
  await new Promise(() => undefined);
}
if (process.env.ARGO_TEST_MCP_FAIL) {
  process.stderr.write(process.env.ARGO_TEST_MCP_FAIL_SAYS ?? 'starting\n\u001b[31mcannot open the database\u001b[0m\n');
  process.exit(3);
}
const noTools = process.env.ARGO_TEST_MCP_NO_TOOLS;
if (noTools) {
  const bare = new Server({ name: 'test-server', version: '1.0.0' }, { capabilities: noTools === 'empty' ? { tools: {} } : { resources: {} } });
  if (noTools === 'empty') bare.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  else bare.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
  await bare.connect(new StdioServerTransport());
  started();
  await new Promise(() => undefined);
}
const huge = process.env.ARGO_TEST_MCP_HUGE;
// Known before it is stopped, whenever that is.
if (huge) started();
if (huge === 'line') process.stdout.write('x'.repeat(11_000_000));
const server = new McpServer({ name: 'test-server', version: '1.0.0' });
if (huge === 'call') server.registerTool('huge', { description: 'A result of 12 MB', inputSchema: {}, annotations: { readOnlyHint: true } }, () => ({ content: [{ type: 'text', text: 'x'.repeat(12_000_000) }] }));
if (huge === 'list') server.registerTool('huge', { description: 'x'.repeat(12_000_000), inputSchema: {} }, () => ({ content: [] }));
server.registerTool(
  'add',
  { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
  ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
);
server.registerTool(
  'shout',
  { description: 'Upper-case a text', inputSchema: { text: z.string(), fail: z.boolean().optional() } },
  ({ text, fail }) => (fail === true ? { content: [{ type: 'text', text: process.env.ARGO_TEST_MCP_SHOUT_SAYS ?? 'shouting is not allowed' }], isError: true } : { content: [{ type: 'text', text: text.toUpperCase() }] }),
);
server.registerTool('attach', { description: 'Attachments', inputSchema: {}, annotations: { readOnlyHint: true } }, () => ({
  content: [
    { type: 'resource', resource: { uri: 'file:///notes.txt', text: 'embedded notes' } },
    { type: 'resource', resource: { uri: 'file:///data.bin', blob: 'AAECAw==', mimeType: 'application/octet-stream' } },
    { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    { type: 'resource_link', uri: 'file:///report.md', name: 'report', description: 'The weekly report', mimeType: 'text/markdown' },
    { type: 'resource_link', uri: 'https://example.test/data', name: 'data' },
  ],
}));
server.registerTool('crash', { description: 'The server exits', inputSchema: {}, annotations: { readOnlyHint: true } }, () => {
  if (process.env.ARGO_TEST_MCP_CRASH_SAYS) process.stderr.write(process.env.ARGO_TEST_MCP_CRASH_SAYS);
  process.exit(7);
});
if (process.env.ARGO_TEST_MCP_BARE) server.registerTool('ping', { description: 'Answers pong', annotations: { readOnlyHint: true } }, () => ({ content: [{ type: 'text', text: 'pong' }] }));
if (process.env.ARGO_TEST_MCP_WAIT) {
  const waiting = process.env.ARGO_TEST_MCP_WAIT;
  server.registerTool('wait', { description: 'Never answers', inputSchema: {}, annotations: { readOnlyHint: true } }, async () => {
    appendFileSync(waiting, `${process.pid}\n`);
    return await new Promise(() => undefined);
  });
}
const extra = [
  ...(process.env.ARGO_TEST_MCP_MALFORMED ? [{ name: 'loose', description: 'No type', inputSchema: { properties: { a: { type: 'string' } } } }] : []),
  ...(process.env.ARGO_TEST_MCP_UNREADABLE ? [{ name: 'lookup', description: 'Look a key up', inputSchema: { type: 'object', properties: { key: { type: 'string', required: true } } } }] : []),
  ...(process.env.ARGO_TEST_MCP_TWICE ? [{ name: 'add', description: 'Add again', inputSchema: { type: 'object' } }] : []),
  ...(process.env.ARGO_TEST_MCP_BAD_OUTPUT ? [{ name: 'status', description: 'A status', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { a: { type: 'strin' } } } }] : []),
  ...(process.env.ARGO_TEST_MCP_SLUG ? [{ name: 'slug', description: 'A slug', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { slug: { type: 'string', pattern: '^([a-z0-9]+-?)+$' } } } }] : []),
  ...(process.env.ARGO_TEST_MCP_BARE ? [{ name: 'ping', description: 'Answers pong', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } }] : []),
];
if (hang === 'list') server.server.setRequestHandler(ListToolsRequestSchema, () => new Promise(() => undefined));
else if (extra.length > 0 || process.env.ARGO_TEST_MCP_PAGES) {
  const tools = [
    { name: 'add', description: 'Add two numbers', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }, annotations: { readOnlyHint: true } },
    ...extra,
  ];
  const pages = process.env.ARGO_TEST_MCP_PAGES;
  // Replaces the SDK's own list handler: such a tool, or such a list, can only be sent by hand.
  server.server.setRequestHandler(ListToolsRequestSchema, (request) => {
    if (pages === undefined) return { tools };
    if (pages === 'loop') return { tools: tools.slice(0, 1), nextCursor: 'again' };
    if (pages === 'endless') return { tools: tools.slice(0, 1), nextCursor: String(Number(request.params?.cursor ?? 0) + 1) };
    const at = Number(request.params?.cursor ?? 0);
    return { tools: tools.slice(at, at + 1), ...(at + 1 < tools.length ? { nextCursor: String(at + 1) } : {}) };
  });
}
if (process.env.ARGO_TEST_MCP_SLUG) {
  server.server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: 'made' }], structuredContent: { slug: `${'a'.repeat(40)}!` } }));
}
if (process.env.ARGO_TEST_MCP_RAW_ERROR) {
  const raw = process.env.ARGO_TEST_MCP_RAW_ERROR;
  // Replaces the SDK's own call handler, which would turn a thrown error into an error result.
  server.server.setRequestHandler(CallToolRequestSchema, () => {
    throw new Error(raw);
  });
}
await server.connect(new StdioServerTransport());
if (!huge) started();
