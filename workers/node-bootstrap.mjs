// Node only: worker_threads cannot start a TypeScript entry directly, so this plain module
// registers tsx in the worker thread and then imports the real entry (workerData.entry).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
