/** One line of the results table. `pass` is null for figures that are reported, not judged. */
export interface Row {
  section: string;
  measure: string;
  argo: string;
  reference: string;
  comparison: string;
  target: string;
  pass: boolean | null;
  /** Printed under the row: what makes the figure mean less than it seems. */
  note?: string;
}

const HEADERS = ['measure', 'argo', 'reference', 'ratio / diff', 'target', 'result'];

const verdict = (pass: boolean | null): string => (pass === null ? '—' : pass ? 'PASS' : 'FAIL');

function cells(row: Row): string[] {
  return [row.measure, row.argo, row.reference, row.comparison, row.target, verdict(row.pass)];
}

/** A plain-text table, one block per section, for a terminal. */
export function formatTable(rows: readonly Row[]): string {
  const widths = HEADERS.map((header, column) => Math.max(header.length, ...rows.map((row) => (cells(row)[column] ?? '').length)));
  const line = (values: string[]): string => values.map((value, column) => value.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  const out: string[] = [];
  let section = '';
  for (const row of rows) {
    if (row.section !== section) {
      section = row.section;
      out.push('', section, line(HEADERS), widths.map((width) => '-'.repeat(width)).join('  '));
    }
    out.push(line(cells(row)));
    if (row.note) out.push(`  note: ${row.note}`);
  }
  return `${out.join('\n')}\n`;
}

/** The same rows as a Markdown table, for docs/performance.md. */
export function formatMarkdown(rows: readonly Row[]): string {
  const escape = (text: string): string => text.replaceAll('|', '\\|');
  const out = [`| ${HEADERS.join(' | ')} |`, `|${HEADERS.map(() => '---').join('|')}|`];
  let section = '';
  for (const row of rows) {
    if (row.section !== section) {
      section = row.section;
      out.push(`| **${escape(section)}** | | | | | |`);
    }
    const [measure = '', ...rest] = cells(row);
    const noted = row.note ? `${measure} (note: ${row.note})` : measure;
    out.push(`| ${[noted, ...rest].map(escape).join(' | ')} |`);
  }
  return `${out.join('\n')}\n`;
}
