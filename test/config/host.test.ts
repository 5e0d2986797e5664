import { describe, expect, it } from 'vitest';
import { parseOllamaHost } from '../../src/config/host.js';

// OLLAMA_HOST forms from the protocol notes (envconfig.Host in ollama/ollama).
describe('parseOllamaHost', () => {
  it.each([
    [undefined, 'http://127.0.0.1:11434'],
    ['', 'http://127.0.0.1:11434'],
    ['  ', 'http://127.0.0.1:11434'],
    ['1.2.3.4', 'http://1.2.3.4:11434'],
    ['1.2.3.4:8080', 'http://1.2.3.4:8080'],
    [':5000', 'http://127.0.0.1:5000'],
    ['http://h', 'http://h:80'],
    ['https://h', 'https://h:443'],
    ['http://h:1234', 'http://h:1234'],
    ['https://h/ollama', 'https://h:443/ollama'],
    ['example.com', 'http://example.com:11434'],
    ['0.0.0.0', 'http://127.0.0.1:11434'],
    ['0.0.0.0:9999', 'http://127.0.0.1:9999'],
    ['[::1]:11435', 'http://[::1]:11435'],
    ['::1', 'http://[::1]:11434'],
    ['h:notaport', 'http://h:11434'],
    ['h:70000', 'http://h:11434'],
  ])('%j → %s', (raw, expected) => {
    expect(parseOllamaHost(raw)).toBe(expected);
  });
});
