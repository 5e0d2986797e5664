// A tiny MCP server over stdio, written with the official SDK, for tests: `add` (read-only) and
// `shout` (an error result when told to). Plain JavaScript so it starts without a compiler.
// With ARGO_TEST_MCP_STARTS set, each start appends its pid to that file (how often was it started?).
import { appendFileSync } from 'node:fs';
import process from 'node:process';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'test-server', version: '1.0.0' });
server.registerTool(
  'add',
  { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
  ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
);
server.registerTool(
  'shout',
  { description: 'Upper-case a text', inputSchema: { text: z.string(), fail: z.boolean().optional() } },
  ({ text, fail }) => (fail === true ? { content: [{ type: 'text', text: 'shouting is not allowed' }], isError: true } : { content: [{ type: 'text', text: text.toUpperCase() }] }),
);
await server.connect(new StdioServerTransport());
if (process.env.ARGO_TEST_MCP_STARTS) appendFileSync(process.env.ARGO_TEST_MCP_STARTS, `${process.pid}\n`);
