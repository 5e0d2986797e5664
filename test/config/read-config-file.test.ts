// config.json as readConfigFile reads it: only UTF-8, only a file of the user's that others cannot change.
import { chmodSync, chownSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RuntimeError, UsageError } from '../../src/errors.js';
import { readConfigFile } from '../../src/config/settings.js';

/** What readConfigFile makes of these bytes: the config, or the error's class and message. */
const outcome = (path: string): unknown => {
  try {
    return readConfigFile(path);
  } catch (error) {
    return [error instanceof UsageError ? 'usage' : error instanceof RuntimeError ? 'runtime' : 'other', (error as Error).message];
  }
};
const written = (bytes: Buffer, mode = 0o600): string => {
  const path = join(mkdtempSync(join(tmpdir(), 'argo-config-')), 'config.json');
  writeFileSync(path, bytes, { mode });
  chmodSync(path, mode);
  return path;
};

describe('readConfigFile: config.json must be UTF-8, never garbled without a word', () => {
  const convert = (path: string): string => `convert it first, e.g. iconv -f latin1 -t utf-8 ${path} > config.utf8 && mv config.utf8 ${path} (-f names the encoding it is in: latin1, cp1252, shift_jis …)`;
  it.each<[string, Buffer, number, number, number | null]>([
    ['latin1 on line 1', Buffer.from('{"personas":{"fr":"R\xe9ponds en fran\xe7ais."}}', 'latin1'), 1, 20, 0xe9],
    ['latin1 on line 3', Buffer.from('{\n  "personas": {\n    "fr": "R\xe9ponds"}}', 'latin1'), 3, 30, 0xe9],
    ['a lone continuation byte', Buffer.from([0x7b, 0x0a, 0x80, 0x7d]), 2, 2, 0x80],
    ['UTF-8 with a byte order mark', Buffer.from('\uFEFF{"personas":{"fr":"Réponds en français."}}'), 0, 0, null],
  ])('%s', (_case, bytes, line, offset, byte) => {
    const path = written(bytes);
    if (byte === null) {
      expect(outcome(path)).toEqual({ personas: { fr: 'Réponds en français.' } });
      return;
    }
    expect(outcome(path)).toEqual(['usage', `line ${line} of ${path} is not UTF-8 (byte 0x${byte.toString(16)} at offset ${offset}): ${convert(path)}`]);
  });
});

describe('readConfigFile: only a config.json others cannot change', () => {
  it('one others may write, in a folder they may enter, is a usage error naming its mode and the fix', () => {
    const path = written(Buffer.from('{}'), 0o666);
    chmodSync(join(path, '..'), 0o755);
    expect(outcome(path)).toEqual([
      'usage',
      `${path} can be written by other users (mode 666), and Argo reads only files others cannot change in its data home (they decide what it sends and runs): run "chmod go-w ${path}"`,
    ]);
  });

  it('a 0664 one (umask 002) in a 0700 data home is read: no one else reaches it', () => {
    const path = written(Buffer.from('{"model":"m"}'), 0o664);
    chmodSync(join(path, '..'), 0o700);
    expect(outcome(path)).toEqual({ model: 'm' });
  });

  it.runIf(process.getuid?.() === 0)('a 0664 one of a shared group, in a folder the group may enter, is a usage error (runs only as root: chgrp)', () => {
    const path = written(Buffer.from('{}'), 0o664);
    chmodSync(join(path, '..'), 0o775);
    chownSync(path, 0, 100);
    expect(outcome(path)).toEqual([
      'usage',
      `${path} can be written by other users (mode 664), and Argo reads only files others cannot change in its data home (they decide what it sends and runs): run "chmod go-w ${path}"`,
    ]);
  });

  it.runIf(process.getuid?.() === 0)('another user\'s is a usage error, read by root too (runs only as root)', () => {
    const path = written(Buffer.from('{"tools":["mcp:x"],"mcpServers":{"x":{"command":"sh","args":["-c","id"]}}}'));
    chmodSync(join(path, '..'), 0o1777);
    chownSync(path, 65534, 65534);
    expect(outcome(path)).toEqual(['usage', `${path} belongs to another user (uid 65534), and Argo reads only your own files in its data home (they decide what it sends and runs): remove it, or make it yours with chown if you trust what it says`]);
  });
});
