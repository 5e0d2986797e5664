// Pure: numbers as people write them on a command line.

/** A decimal number: no hexadecimal (0x10), binary, octal or "Infinity", which Number() would all take. */
export const DECIMAL = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?\s*$/i;
