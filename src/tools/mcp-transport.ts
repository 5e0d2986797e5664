// A stdio transport for an MCP server, over the SDK's public framing (ReadBuffer, serializeMessage).
// Unlike the SDK's own, the server runs in a process group of its own, so closing it ends what its
// launcher started too (`sh -c …`, npx), and its exit is known, with its code, the moment it
// happens, even while a child of it still holds its stdout.
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { Socket } from 'node:net';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killGroup, ownGroup } from './process.js';

/** How long a server may take to leave once its stdin is closed, before its group is signalled. */
const LEAVE_GRACE_MS = 2000;
/** The longest message read from a server (the SDK's own bound): past it, the stream cannot be read on. */
export const MAX_MESSAGE_MB = 10;

export interface ServerProcess {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** How the server ended (`exit code 7`, `signal SIGKILL`); null while it runs. */
  exit: string | null = null;
  /** Why Argo stopped the server itself, what it sent being unreadable (too long a message); null otherwise. */
  refused: string | null = null;
  private child: ChildProcessWithoutNullStreams | null = null;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_MB * 1024 * 1024 });
  private closed = false;

  /** `onStderr` gets what the server writes on stderr (never shown raw: it may say anything). */
  constructor(
    private readonly server: ServerProcess,
    private readonly onStderr: (text: string) => void,
  ) {}

  start(): Promise<void> {
    // Killed before it was started: it is not started at all.
    if (this.closed) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve, reject) => {
      const child = spawn(this.server.command, this.server.args, {
        env: this.server.env,
        ...(this.server.cwd !== undefined ? { cwd: this.server.cwd } : {}),
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      this.child = child;
      // Killed with Argo, whenever Argo exits: while it starts, runs or is given its grace to leave.
      ownGroup(child);
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => resolve());
      child.once('exit', (code, signal) => {
        this.exit = code !== null ? `exit code ${code}` : `signal ${signal ?? 'unknown'}`;
        // What it left running is stopped, and the connection ends now, not when its pipes close.
        killGroup(child);
        // A child that left its group (setsid) may hold the pipes for long: they must not keep Argo
        // running. Let go of, not closed at once: what the server wrote before it exited is still read.
        for (const stream of [child.stdin, child.stdout, child.stderr]) if (stream instanceof Socket) stream.unref();
        setTimeout(() => releasePipes(child), LEAVE_GRACE_MS).unref();
        this.end();
      });
      child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (text: string) => this.onStderr(text));
      for (const stream of [child.stdin, child.stdout, child.stderr]) stream.on('error', (error) => this.onerror?.(error));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || this.closed) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Closes stdin (a stdio server's cue to leave), then stops the group if it has not gone in time. */
  async close(): Promise<void> {
    const child = this.child;
    if (child === null) return;
    if (!this.closed) {
      child.stdin.end();
      if (this.running()) {
        let timer: NodeJS.Timeout | undefined;
        const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, LEAVE_GRACE_MS)));
        await Promise.race([gone, late]);
        clearTimeout(timer);
        if (this.running()) killGroup(child);
      }
    }
    // Also once it has exited: a child it left may still hold the pipes.
    releasePipes(child);
    this.end();
  }

  /** Started and not exited. A command that could not be started (ENOENT, EACCES) has no pid, and no exit will follow. */
  private running(): boolean {
    return this.child?.pid !== undefined && this.exit === null;
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    try {
      this.buffer.append(chunk);
    } catch {
      // The rest of that message would be read as messages of its own: the server cannot be talked to any more.
      this.refuse(`it sent a message over ${MAX_MESSAGE_MB} MB, the most Argo reads`);
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (error) {
        // A line that is no JSON-RPC message (a server's stray output) is reported and passed over.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  /** Stops the server's group now, without the grace `close` gives it, and ends the connection. */
  kill(): void {
    const child = this.child;
    if (child !== null) {
      killGroup(child);
      releasePipes(child);
    }
    this.end();
  }

  private refuse(why: string): void {
    this.refused = why;
    this.kill();
  }

  private end(): void {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}

/** A child the server left (out of its group) may hold the pipes: Argo's ends are closed, so they keep nothing running. */
function releasePipes(child: ChildProcessWithoutNullStreams): void {
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream.destroy();
}
