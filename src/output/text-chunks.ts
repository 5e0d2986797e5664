import type { TextOutput } from './sink.js';

/** Bytes a chunk holds before it is written. */
export const TEXT_CHUNK_BYTES = 16 * 1024;

/**
 * Long text made of many small pieces (one line per turn of a long session), written in chunks:
 * each piece is encoded straight into one reusable buffer, so neither the whole text nor a string
 * per line is ever made, only one per chunk. Synchronous, as one `write` of the whole text would be;
 * the bytes written are the same.
 */
export class TextChunks {
  private readonly bytes: Buffer;
  private used = 0;

  constructor(
    private readonly out: TextOutput,
    private readonly chunkBytes = TEXT_CHUNK_BYTES,
  ) {
    // Room for a full chunk plus one more line-sized piece.
    this.bytes = Buffer.allocUnsafe(2 * chunkBytes);
  }

  add(piece: string): void {
    // A UTF-16 unit takes at most 3 bytes in UTF-8.
    if (piece.length * 3 > this.bytes.length - this.used) {
      this.flush();
      if (piece.length * 3 > this.bytes.length) {
        this.out.write(piece);
        return;
      }
    }
    this.used += this.bytes.write(piece, this.used);
  }

  /** Ends a line; writes the chunk once it is full (so chunks end on whole lines). */
  endLine(): void {
    this.add('\n');
    if (this.used >= this.chunkBytes) this.flush();
  }

  flush(): void {
    if (this.used === 0) return;
    const text = this.bytes.toString('utf8', 0, this.used);
    this.used = 0;
    this.out.write(text);
  }
}
