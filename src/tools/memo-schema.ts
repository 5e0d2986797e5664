// memo.json's schema, apart from memo.ts so that zod loads only when a memo file is read.
import * as z from 'zod';
import { ownRecord } from '../log/own-record.js';

// A key named __proto__ is a memo key like any other (memo.ts keeps it), so the schema checks it too.
export const MemoSchema = ownRecord(z.string());
