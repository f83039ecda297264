/** The hand-made run records of the tests, shared with the benchmarks: bench/run-records.ts. */
export { runFile, runHeader, sampleRecord, storedRunSample, unstoredDataset } from '../../bench/run-records.ts';
