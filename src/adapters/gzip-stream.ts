/**
 * Gzip with the platform's streams (CompressionStream / DecompressionStream): the report's data
 * in the app's export, the report page and the import worker. Node 18+ has the same globals.
 */
import { InflationLimitError, type GzipPort } from '../core/report/report-file.ts';

export const streamGzip: GzipPort = {
  async gzip(text) {
    const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  },
  async gunzip(bytes, maxBytes) {
    const inflated = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip'));
    if (maxBytes === undefined) return new Response(inflated).text();
    // Counted as it streams: the decompression is cancelled once past the bound.
    const reader = inflated.getReader();
    const decoder = new TextDecoder();
    const parts: string[] = [];
    let seen = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += value.length;
      if (seen > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new InflationLimitError(maxBytes);
      }
      parts.push(decoder.decode(value, { stream: true }));
    }
    parts.push(decoder.decode());
    return parts.join('');
  },
};
