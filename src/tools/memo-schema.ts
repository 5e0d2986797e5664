// memo.json's schema, apart from memo.ts so that zod loads only when a memo file is read.
import * as z from 'zod';

export const MemoSchema = z.record(z.string(), z.string());
