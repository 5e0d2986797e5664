// Pure: numbers as people write them on a command line.

/** A decimal number: no hexadecimal (0x10), binary, octal or "Infinity", which Number() would all take. */
export const DECIMAL = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?\s*$/i;

/**
 * A whole number with its thousands grouped by commas (100000 → "100,000"), as toLocaleString('en-US')
 * writes it, without Intl: its first use loads ICU data, some 10 ms a tool's module cannot spend.
 */
export function groupThousands(value: number): string {
  const digits = String(Math.trunc(Math.abs(value)));
  return `${value < 0 ? '-' : ''}${digits.replace(/\B(?=(\d{3})+$)/g, ',')}`;
}
