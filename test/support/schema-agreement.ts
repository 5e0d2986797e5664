// A hand check must give its zod schema's verdict: every single-field change of a good value is put
// to both, and the ones where they differ are named.

interface Schema {
  safeParse: (value: unknown) => { success: boolean };
}

/** `base` with `probe` in place of each field in turn (undefined removes the field): where `check` and `schema` disagree. */
export function disagreements(base: Record<string, unknown>, probes: readonly unknown[], check: (value: unknown) => boolean, schema: Schema): string[] {
  const found: string[] = [];
  for (const key of Object.keys(base)) {
    for (const probe of probes) {
      const value: Record<string, unknown> = { ...base, [key]: probe };
      if (probe === undefined) Reflect.deleteProperty(value, key);
      const expected = schema.safeParse(value).success;
      if (check(value) !== expected) found.push(`${key} = ${shown(probe)}: zod ${expected}`);
    }
  }
  return found;
}

function shown(probe: unknown): string {
  if (probe === undefined) return '(removed)';
  return typeof probe === 'number' ? String(probe) : JSON.stringify(probe);
}
