// The words of a tool list (--tools, config's "tools"): config trims with them, tools/toolsets.ts resolves them.

/** `-name` in a list takes away what `name` would add: `dev,-shell` is dev without its commands. */
export const EXCLUDE_PREFIX = '-';

/** `none` alone means no tools (it overrides config's default). */
export const NO_TOOLS = 'none';

/** A list of only `-name`s trims another list instead of replacing it. */
export const takesAwayOnly = (names: readonly string[]): boolean => names.length > 0 && names.every((name) => name.startsWith(EXCLUDE_PREFIX));
