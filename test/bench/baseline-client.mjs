// The baseline argo is measured against: the same request, sent with the `ollama` client, every
// streamed token written to stdout as it arrives. Plain JavaScript run by plain node, as argo's built
// bin is. Usage: node test/bench/baseline-client.mjs <host> '<request body JSON>'
import process from 'node:process';
import { Ollama } from 'ollama';

const [host, body] = process.argv.slice(2);
const client = new Ollama({ host });
/** @type {import('ollama').ChatRequest} */
const request = JSON.parse(body);
const stream = await client.chat({ ...request, stream: true });
for await (const part of stream) process.stdout.write(part.message.content);
process.stdout.write('\n');
