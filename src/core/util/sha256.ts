/**
 * SHA-256, the one route every digest of the workbench takes (file fingerprints, run and
 * database identities, verdict-cache and judge-cache keys): the `Sha256` contract, the one loop
 * that hashes a file read in pieces (`sha256OfPieces`), and the core's own implementation in pure
 * TypeScript (`pureSha256`, `sha256Hex`), which is synchronous and the same in the browser, a
 * worker and the CLI (the core has no Web Crypto or Node crypto).
 *
 * A host hashes large files with its fastest implementation of the same contract: Node's
 * `createHash('sha256')` (a node:crypto Hash is a `Sha256` as it is) and the browser's hash-wasm
 * (`wasmSha256`, src/adapters/import/hash-stream.ts). All give the same hex digest for the same
 * bytes (tests/core/sha256-route.test.ts); a text is hashed as its UTF-8 bytes (a lone surrogate
 * as U+FFFD, as TextEncoder and Node's Buffer encode it).
 */

/** An incremental SHA-256: bytes (or a text, as UTF-8) in, in any pieces; the hex digest out, once. */
import { WorkbenchError } from '../errors.ts';
export interface Sha256 {
  update(data: Uint8Array | string): unknown;
  digest(encoding: 'hex'): string;
}

/** A fresh `Sha256` of a host (Node's node:crypto, the browser's hash-wasm, the core's pure one). */
export type NewSha256 = () => Sha256 | Promise<Sha256>;

const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** UTF-8 bytes of a text; a lone surrogate is U+FFFD (EF BF BD), as TextEncoder and Node's Buffer write it. */
function utf8(text: string): Uint8Array {
  const out = new Uint8Array(text.length * 3);
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const lo = text.charCodeAt(i + 1);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
        i++;
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) out[n++] = c;
    else if (c < 0x800) {
      out[n++] = 0xc0 | (c >> 6);
      out[n++] = 0x80 | (c & 63);
    } else if (c < 0x10000) {
      out[n++] = 0xe0 | (c >> 12);
      out[n++] = 0x80 | ((c >> 6) & 63);
      out[n++] = 0x80 | (c & 63);
    } else {
      out[n++] = 0xf0 | (c >> 18);
      out[n++] = 0x80 | ((c >> 12) & 63);
      out[n++] = 0x80 | ((c >> 6) & 63);
      out[n++] = 0x80 | (c & 63);
    }
  }
  return out.subarray(0, n);
}

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** The core's SHA-256 in pure TypeScript, fed in pieces (FIPS 180-4). */
class PureSha256 implements Sha256 {
  readonly #h = new Uint32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ]);
  readonly #w = new Uint32Array(64);
  /** Bytes of an unfinished block. */
  readonly #block = new Uint8Array(64);
  #held = 0;
  /** Bytes hashed in all (a number is exact up to 2^53). */
  #length = 0;
  #done = false;

  update(data: Uint8Array | string): this {
    if (this.#done) throw new WorkbenchError('INTERNAL', 'sha256: update after digest');
    const bytes = typeof data === 'string' ? utf8(data) : data;
    this.#length += bytes.length;
    let at = 0;
    if (this.#held > 0) {
      const take = Math.min(64 - this.#held, bytes.length);
      this.#block.set(bytes.subarray(0, take), this.#held);
      this.#held += take;
      at = take;
      if (this.#held < 64) return this;
      this.#compress(this.#block, 0);
      this.#held = 0;
    }
    for (; at + 64 <= bytes.length; at += 64) this.#compress(bytes, at);
    if (at < bytes.length) {
      this.#block.set(bytes.subarray(at));
      this.#held = bytes.length - at;
    }
    return this;
  }

  digest(_encoding: 'hex' = 'hex'): string {
    if (this.#done) throw new WorkbenchError('INTERNAL', 'sha256: digest taken twice');
    const bitLen = this.#length * 8;
    const tail = new Uint8Array(this.#held + 9 > 64 ? 128 : 64);
    tail.set(this.#block.subarray(0, this.#held));
    tail[this.#held] = 0x80;
    const view = new DataView(tail.buffer);
    view.setUint32(tail.length - 8, Math.floor(bitLen / 2 ** 32));
    view.setUint32(tail.length - 4, bitLen >>> 0);
    for (let off = 0; off < tail.length; off += 64) this.#compress(tail, off);
    this.#done = true;
    return Array.from(this.#h, (x) => x.toString(16).padStart(8, '0')).join('');
  }

  #compress(bytes: Uint8Array, off: number): void {
    const w = this.#w;
    const h = this.#h;
    for (let t = 0; t < 16; t++) {
      const i = off + t * 4;
      w[t] = ((bytes[i]! << 24) | (bytes[i + 1]! << 16) | (bytes[i + 2]! << 8) | bytes[i + 3]!) >>> 0;
    }
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15]!;
      const b = w[t - 2]!;
      const s0 = rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3);
      const s1 = rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10);
      w[t] = (w[t - 16]! + s0 + w[t - 7]! + s1) >>> 0;
    }
    let a = h[0]!;
    let b = h[1]!;
    let c = h[2]!;
    let d = h[3]!;
    let e = h[4]!;
    let f = h[5]!;
    let g = h[6]!;
    let hh = h[7]!;
    for (let t = 0; t < 64; t++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t]! + w[t]!) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      hh = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    h[0] = (h[0]! + a) >>> 0;
    h[1] = (h[1]! + b) >>> 0;
    h[2] = (h[2]! + c) >>> 0;
    h[3] = (h[3]! + d) >>> 0;
    h[4] = (h[4]! + e) >>> 0;
    h[5] = (h[5]! + f) >>> 0;
    h[6] = (h[6]! + g) >>> 0;
    h[7] = (h[7]! + hh) >>> 0;
  }
}

/** A fresh pure-TypeScript SHA-256 (synchronous; for texts and small inputs: a host hashes large files with its own). */
export const pureSha256 = (): Sha256 => new PureSha256();

/** SHA-256 (hex) of a text's UTF-8 bytes, synchronously (judge-cache keys, label and prompt fingerprints). */
export function sha256Hex(text: string): string {
  return new PureSha256().update(text).digest();
}

/**
 * SHA-256 (hex) and byte count of a file read in pieces (a stream of any size: nothing is held
 * but the piece being hashed), with the host's `newSha256`; `onPiece` sees each piece after it
 * was hashed.
 */
export async function sha256OfPieces(
  newSha256: NewSha256,
  pieces: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  onPiece?: (piece: Uint8Array) => void,
): Promise<{ sha256: string; bytes: number }> {
  const hash = await newSha256();
  let bytes = 0;
  for await (const piece of pieces) {
    hash.update(piece);
    bytes += piece.length;
    onPiece?.(piece);
  }
  return { sha256: hash.digest('hex'), bytes };
}
