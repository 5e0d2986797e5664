// What a user wrote is never silently changed: bytes that are not UTF-8 are refused, where
// Buffer#toString would have put U+FFFD in their place and sent and logged that.

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

export type Utf8Text = { ok: true; text: string } | { ok: false; offset: number; byte: number };

/** `bytes` as text (a byte order mark kept, as written); else where the first byte that is not UTF-8 is. */
export function decodeUtf8(bytes: Uint8Array): Utf8Text {
  try {
    return { ok: true, text: strict.decode(bytes) };
  } catch {
    const offset = firstBadByte(bytes);
    return { ok: false, offset, byte: bytes[offset] ?? 0 };
  }
}

/**
 * The lenient decoder puts U+FFFD for each bad sequence; everything before the first one decoded
 * as it was written, so its UTF-8 length is the offset of the first bad byte. A U+FFFD written as
 * such (EF BF BD) is text, not a replacement.
 */
function firstBadByte(bytes: Uint8Array): number {
  let offset = 0;
  for (const char of lenient.decode(bytes)) {
    if (char === '\uFFFD' && !(bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd)) return offset;
    offset += utf8Length(char.codePointAt(0) ?? 0);
  }
  return offset;
}

function utf8Length(codePoint: number): number {
  if (codePoint < 0x80) return 1;
  if (codePoint < 0x800) return 2;
  return codePoint < 0x10000 ? 3 : 4;
}
