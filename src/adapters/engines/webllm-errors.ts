/**
 * web-llm's failures as EngineErrors. Across its worker protocol an error arrives as a plain
 * Error whose name is lost and whose message sometimes starts with the class name
 * ("CompileError: ..."), so the mapping reads the name and the message.
 *
 * GPU_LOST (device lost, out of memory) is what the run layer pauses on: the samples already
 * generated are kept, the page is reloaded to get a fresh GPU device, and the run resumes.
 */
import { EngineError, isEngineError, type EngineErrorCode } from '../../core/engine/engine-error.ts';
import { isCancellation } from '../../core/errors.ts';

export const GPU_LOST_ADVICE =
  'The GPU stopped working for this page (device lost or out of memory). The samples generated so far are kept: reload the page and resume the run, or choose a smaller model.';

const RULES: Array<[RegExp, EngineErrorCode, (m: string) => string]> = [
  [
    /device (was |is )?lost|devicelost|GPUDeviceLostInfo|out of memory|outofmemory|GPUOutOfMemory|\bOOM\b|insufficient memory|failed to allocate|allocation failed/i,
    'GPU_LOST',
    (m) => `${GPU_LOST_ADVICE} (${m})`,
  ],
  [
    /ShaderF16SupportError|shader-f16/i,
    'UNSUPPORTED',
    () => 'This GPU cannot run 16-bit float shaders (shader-f16), which this model needs: choose its q4f32 variant.',
  ],
  [
    /WebGPUNotAvailableError|WebGPU is not (available|supported)|navigator\.gpu/i,
    'UNSUPPORTED',
    () => 'This browser has no WebGPU: use a recent Chrome or Edge, or the CPU engine.',
  ],
  [
    /Unable to find a compatible GPU/i,
    'UNSUPPORTED',
    () => 'WebGPU found no usable GPU on this machine: use the CPU engine, or check chrome://gpu.',
  ],
  [
    /FeatureSupportError|exceeds limit|Cannot initialize runtime/i,
    'UNSUPPORTED',
    (m) => `This GPU lacks what the model needs: ${m}`,
  ],
  [
    /ModelNotFoundError|Cannot find model record/i,
    'MODEL_MISSING',
    (m) => `The model is not in the app's model list: ${m}`,
  ],
  [
    /CompileError|WebAssembly\.(instantiate|compile)|expected magic word|LinkError/i,
    'MODEL_REJECTED',
    (m) =>
      `The model library (.wasm) could not be loaded: it is not a valid web-llm model library for this web-llm version (${m})`,
  ],
  [
    /Unexpected token '?<|is not valid JSON|in JSON at position/i,
    'MODEL_MISSING',
    (m) =>
      `A model file is not valid JSON; the server may have answered with a web page instead of the file: check the model URL (${m})`,
  ],
  [
    /Failed to execute 'add' on 'Cache'|Failed to fetch|NetworkError|Request failed|Cannot fetch/i,
    'MODEL_MISSING',
    (m) => `A model file could not be downloaded (${m}). Check the model URL and that every file is there.`,
  ],
];

export function mapWebLlmError(err: unknown, where?: string): EngineError {
  if (isEngineError(err)) return err;
  const e = err as { name?: string; message?: string };
  const name = e?.name && e.name !== 'Error' ? `${e.name}: ` : '';
  const message = `${name}${e?.message ?? String(err)}`;
  if (isCancellation(err)) return new EngineError('ABORTED', 'cancelled', where);
  for (const [pattern, code, text] of RULES)
    if (pattern.test(message)) return new EngineError(code, text(message), where);
  return new EngineError('INTERNAL', message, where);
}
