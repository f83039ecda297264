/**
 * Gzip with the platform's streams (CompressionStream / DecompressionStream): the report's data
 * in the app's export, the report page and the import worker. Node 18+ has the same globals.
 */
import type { GzipPort } from '../core/report/report-file.ts';

export const streamGzip: GzipPort = {
  async gzip(text) {
    const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  },
  async gunzip(bytes) {
    const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text();
  },
};
