// How many patterns a glob's braces expand to, counted on `braces`' own parse (the library
// fast-glob expands them with), never by expanding: `{a,b}` written 21 times is 2,097,152 patterns,
// which fast-glob would build, each with its own matcher, before listing a single file.
import type { Options } from 'braces';

/** A node of braces' parse tree (the library exports `parse`, its type package does not). */
interface BraceNode {
  type: string;
  value?: string;
  nodes?: BraceNode[];
  commas?: number;
  ranges?: number;
  invalid?: boolean;
  dollar?: boolean;
}

interface BracesLibrary {
  (pattern: string, options?: Options): string[];
  parse(pattern: string): BraceNode;
}

/**
 * The number of patterns `pattern` expands to, or `most + 1` once it is past `most` (counting stops
 * there). What braces leaves as written counts one: `{a}`, `{}`, `${a,b}`, an unclosed `{`.
 */
export async function braceExpansionCount(pattern: string, most: number): Promise<number> {
  const { default: braces } = (await import('braces')) as unknown as { default: BracesLibrary };
  const past = most + 1;
  const sequence = (nodes: readonly BraceNode[]): number => {
    let total = 1;
    for (const node of nodes) total = Math.min(total * brace(node), past);
    return total;
  };
  const brace = (node: BraceNode): number => {
    if (node.type !== 'brace' || node.invalid === true || node.dollar === true) return 1;
    const inner = (node.nodes ?? []).filter((child) => child.type !== 'open' && child.type !== 'close');
    if ((node.ranges ?? 0) > 0) return range(inner);
    // {a,b{c,d}}: the sum of its alternatives, each the product of its parts.
    let alternatives = 0;
    let part: BraceNode[] = [];
    for (const child of [...inner, { type: 'comma' }]) {
      if (child.type !== 'comma') {
        part.push(child);
        continue;
      }
      alternatives = Math.min(alternatives + sequence(part), past);
      part = [];
    }
    return alternatives;
  };
  // {1..9}, {a..e}, {0..100..5}: braces fills it, refusing one past the limit without making it.
  const range = (inner: readonly BraceNode[]): number => {
    try {
      return Math.min(braces(`{${inner.map((child) => child.value ?? '').join('')}}`, { expand: true, rangeLimit: most }).length, past);
    } catch {
      return past;
    }
  };
  return sequence(braces.parse(pattern).nodes ?? []);
}
