// Preload (node --import) that appends the URL of every module the process loads to the file named
// by ARGO_TRACE_LOADS, one per line: how the start-up test sees what a command pulls in.
import { register } from 'node:module';
import process from 'node:process';
import { URL } from 'node:url';

register(new URL('./trace-loads-hooks.mjs', import.meta.url), { data: process.env.ARGO_TRACE_LOADS });
