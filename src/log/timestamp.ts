/** date-fns patterns of the log's times: ISO 8601 local time with offset, and the daily file's date. */
export const TIMESTAMP_PATTERN = "yyyy-MM-dd'T'HH:mm:ss.SSSxxx";
export const DAY_PATTERN = 'yyyy-MM-dd';
