import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { descriptorNamed, descriptorOf } from '../../src/cli/descriptor-path.js';

describe('descriptorNamed: the descriptor a path names by its spelling', () => {
  it.each<[string, number | null]>([
    ['/dev/stdin', 0],
    ['/dev/stdout', 1],
    ['/dev/stderr', 2],
    ['/dev/fd/0', 0],
    ['/dev/fd/3', 3],
    ['/dev/fd/12', 12],
    ['/proc/self/fd/1', 1],
    ['/proc/thread-self/fd/2', 2],
    ['/proc/4242/fd/1', 1],
    // Another process's descriptors are files like any other.
    ['/proc/4243/fd/1', null],
    ['/dev/stdout2', null],
    ['/dev/fd/', null],
    ['/dev/fd/x', null],
    ['/dev/fd/1/x', null],
    ['/dev/null', null],
    ['/tmp/stdout', null],
    ['dev/stdout', null],
  ])('%s → %s', (path, fd) => {
    expect(descriptorNamed(path, 4242)).toBe(fd);
  });
});

describe('descriptorOf: following links to a descriptor', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-descriptor-'));
  symlinkSync('/dev/stdout', join(dir, 'out'));
  symlinkSync('out', join(dir, 'again'));
  symlinkSync(join(dir, 'plain.jsonl'), join(dir, 'file-link'));
  symlinkSync('loop-b', join(dir, 'loop-a'));
  symlinkSync('loop-a', join(dir, 'loop-b'));

  it.each<[string, number | null]>([
    ['/dev/stderr', 2],
    [join(dir, 'out'), 1],
    [join(dir, 'again'), 1],
    [join(dir, 'file-link'), null],
    [join(dir, 'plain.jsonl'), null],
    [join(dir, 'loop-a'), null],
  ])('%s → %s', async (path, fd) => {
    expect(await descriptorOf(path)).toBe(fd);
  });
});
