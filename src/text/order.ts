// Pure: an order for names that is the same on every machine.

/**
 * Orders two strings by UTF-16 code units, as Array.prototype.sort does by default. Unlike
 * localeCompare, the result does not depend on LANG (a Turkish locale puts "Ib" before "ia"), so
 * what a listing puts first, or which session `argo -c` continues, is the same everywhere.
 */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
