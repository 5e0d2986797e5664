// Cutting text to a length in UTF-16 units (what JSON and budgets count) without splitting a
// surrogate pair: half an emoji is a lone surrogate, which JSON encoders and terminals mangle.

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The first `max` units of `text`, one fewer when the cut would leave half of a surrogate pair. */
export function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = Math.max(0, max);
  return end > 0 && isHighSurrogate(text.charCodeAt(end - 1)) ? text.slice(0, end - 1) : text.slice(0, end);
}

/** The last `max` units of `text`, one fewer when the cut would leave half of a surrogate pair. */
export function tailOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const start = text.length - Math.max(0, max);
  return isLowSurrogate(text.charCodeAt(start)) ? text.slice(start + 1) : text.slice(start);
}

/** `text` cut to `max` units (as headOf) with `…` after it; unchanged when it fits. */
export function clipText(text: string, max: number): string {
  return text.length > max ? `${headOf(text, max)}…` : text;
}
