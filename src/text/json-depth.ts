// How deep a JSON value nests. JSON.parse takes any depth, but JSON.stringify (a log line, a request
// to Ollama) and every recursive walk run out of stack a few thousand levels down.

/** The deepest nesting of arrays and objects taken from outside: a JSON Schema or tool arguments nest a few levels. */
export const MAX_JSON_DEPTH = 100;

/** Whether `value` holds arrays or objects more than `max` levels deep; walked without recursion. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(item)) if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
  }
  return false;
}
