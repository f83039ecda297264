/**
 * A GGUF file's fixed header, checked before the file is handed to llama.cpp (wllama): its
 * loader resolves even for garbage (it then reports an empty vocabulary) and its message for an
 * obsolete version is garbled, so the checks and the wording are ours.
 *
 * Layout (little-endian): magic "GGUF", u32 version, then tensor count and metadata count,
 * both u64 since version 2 (u32 in version 1).
 */
import { EngineError } from './engine-error.ts';

/** Bytes a caller must read from the start of the file for `checkGgufHeader`. */
export const GGUF_HEADER_BYTES = 24;
const SUPPORTED_GGUF_VERSIONS: readonly number[] = [2, 3];

interface GgufHeader {
  version: number;
  tensorCount: number;
  metadataCount: number;
}

const RECONVERT =
  're-convert the original weights with a current llama.cpp (convert_hf_to_gguf.py), or download a recent GGUF of the model';

/** Pre-GGUF llama.cpp formats, by their first four bytes. */
const LEGACY_MAGIC: Record<string, string> = {
  lmgg: 'GGML',
  fmgg: 'GGMF',
  tjgg: 'GGJT',
};

function u32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)) + b[at + 3]! * 0x1000000;
}

/** A u64 that must fit in a double; null when it does not (a corrupt count). */
function u64(b: Uint8Array, at: number): number | null {
  const hi = u32(b, at + 4);
  if (hi >= 0x200000) return null;
  return hi * 0x100000000 + u32(b, at);
}

/**
 * Validates the first bytes of a GGUF file. Throws MODEL_REJECTED with a sentence saying what
 * to do for: a file too short, legacy GGML/GGJT files, a non-GGUF file, GGUF version 1,
 * big-endian files, versions newer than 3, and implausible counts.
 */
export function checkGgufHeader(head: Uint8Array, fileName: string, fileSize: number): GgufHeader {
  if (fileSize < GGUF_HEADER_BYTES || head.length < GGUF_HEADER_BYTES) {
    throw new EngineError(
      'MODEL_REJECTED',
      `only ${fileSize} bytes: too short to be a GGUF model (is the download incomplete?)`,
      fileName,
    );
  }
  const magic = String.fromCharCode(head[0]!, head[1]!, head[2]!, head[3]!);
  const legacy = LEGACY_MAGIC[magic];
  if (legacy) {
    throw new EngineError(
      'MODEL_REJECTED',
      `this is a ${legacy} file, the format llama.cpp used before GGUF, which it no longer reads: ${RECONVERT}`,
      fileName,
    );
  }
  if (magic !== 'GGUF') {
    const shown = Array.from(head.subarray(0, 4), (c) => (c >= 32 && c < 127 ? String.fromCharCode(c) : '.')).join('');
    throw new EngineError(
      'MODEL_REJECTED',
      `not a GGUF model: the file starts with "${shown}" instead of "GGUF". Choose a .gguf file (llama.cpp format)`,
      fileName,
    );
  }
  const version = u32(head, 4);
  if (version === 1) {
    throw new EngineError(
      'MODEL_REJECTED',
      `GGUF version 1 is obsolete and current llama.cpp (and so this workbench) cannot load it: ${RECONVERT}`,
      fileName,
    );
  }
  // A big-endian file has its version bytes reversed: 2 reads as 0x02000000.
  if (version > 0xffff && (version & 0xffff) === 0) {
    throw new EngineError(
      'MODEL_REJECTED',
      'this GGUF file is big-endian; WebAssembly is little-endian and cannot load it: use the little-endian GGUF of the model',
      fileName,
    );
  }
  if (!SUPPORTED_GGUF_VERSIONS.includes(version)) {
    throw new EngineError(
      'MODEL_REJECTED',
      `GGUF version ${version} is not supported (supported: ${SUPPORTED_GGUF_VERSIONS.join(', ')}): ` +
        (version > 3
          ? 'the file is newer than this llama.cpp build; update the workbench or use a version 3 GGUF'
          : RECONVERT),
      fileName,
    );
  }
  const tensorCount = u64(head, 8);
  const metadataCount = u64(head, 16);
  if (tensorCount === null || metadataCount === null || tensorCount > 10_000_000 || metadataCount > 1_000_000) {
    throw new EngineError(
      'MODEL_REJECTED',
      'the GGUF header is corrupt (impossible tensor or metadata counts)',
      fileName,
    );
  }
  return { version, tensorCount, metadataCount };
}
