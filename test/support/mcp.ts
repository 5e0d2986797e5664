import { resolve } from 'node:path';

/** The test MCP server (test/support/mcp-server.mjs) as an mcpServers entry. */
export const TEST_MCP_SERVER = { command: process.execPath, args: [resolve(import.meta.dirname, 'mcp-server.mjs')] };
