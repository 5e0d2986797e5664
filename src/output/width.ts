// How wide Argo's tables and help may be. As ls and git do, a set COLUMNS wins (on a terminal too,
// so `COLUMNS=60 argo logs` shows what a 60-column window would) and sizes piped output; otherwise
// a terminal's own width, and none off a terminal (the caller's fixed default).

export interface WidthInputs {
  /** The COLUMNS variable, as set. */
  columnsEnv: string | undefined;
  isTTY: boolean | undefined;
  /** The terminal's width as the stream reports it (Node updates it on SIGWINCH). */
  columns: number | undefined;
}

/** A whole number of columns above 0; anything else (empty, `abc`, `0`, `80.5`) counts as not set. */
function columnsOf(value: string | undefined): number | null {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return null;
  const columns = Number(value);
  return Number.isSafeInteger(columns) && columns > 0 ? columns : null;
}

export function outputWidth({ columnsEnv, isTTY, columns }: WidthInputs): number | null {
  const fromEnv = columnsOf(columnsEnv);
  if (fromEnv !== null) return fromEnv;
  return isTTY === true && typeof columns === 'number' && columns > 0 ? columns : null;
}

/** The width of `stream` now: read each time, so a resized terminal is seen at the next line. */
export function widthOfStream(stream: { isTTY?: boolean; columns?: number }, env: { COLUMNS?: string | undefined }): number | null {
  return outputWidth({ columnsEnv: env.COLUMNS, isTTY: stream.isTTY, columns: stream.columns });
}
