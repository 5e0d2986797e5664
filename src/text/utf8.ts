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

/**
 * The one line refusing bytes that are not UTF-8, by what they look like: UTF-16 text (its byte
 * order mark), binary data (a NUL byte, which no text in another 8-bit encoding holds), else text
 * in another encoding, with the conversion (`convert` gives it for an encoding). Converting binary
 * data as latin1 would only send garbage, so it is not offered.
 */
export function notText(what: string, bytes: Uint8Array, bad: { offset: number; byte: number }, convert: (encoding: string) => string): string {
  const [first, second] = bytes;
  if ((first === 0xff && second === 0xfe) || (first === 0xfe && second === 0xff)) {
    return `${what} is UTF-16 text, not UTF-8 (it starts with a UTF-16 byte order mark): convert it first, e.g. ${convert('utf-16')}`;
  }
  const nul = bytes.indexOf(0);
  if (nul !== -1) return `${what} looks like binary data, not text (a NUL byte at offset ${nul}): argo sends a model text only; give it text about the data instead (what file, strings or xxd print, say)`;
  return notUtf8(what, bad, convert('latin1'));
}

/** The one line refusing text that is not UTF-8: where its first bad byte is, and how to convert it. */
export function notUtf8(what: string, bad: { offset: number; byte: number }, convert: string): string {
  return `${what} is not UTF-8 (byte 0x${bad.byte.toString(16).padStart(2, '0')} at offset ${bad.offset}): convert it first, e.g. ${convert} (-f names the encoding it is in: latin1, cp1252, shift_jis …)`;
}

/** UTF-8's byte order mark as text: no text of a file or a stream that starts with it (Notepad writes one). */
export const BYTE_ORDER_MARK = '\uFEFF';

/** How many bytes of a byte order mark `bytes` start with: 3, or 0. */
export function bomLength(bytes: Uint8Array): number {
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
}
