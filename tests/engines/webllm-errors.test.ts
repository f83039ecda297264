import { describe, expect, it } from 'vitest';
import { mapWebLlmError } from '../../src/adapters/engines/webllm-errors.ts';

describe('web-llm errors', () => {
  it.each<[string, unknown, string]>([
    [
      'a lost device',
      new Error('Device was lost. This can happen due to insufficient memory or other GPU constraints.'),
      'GPU_LOST',
    ],
    [
      'a GPU out-of-memory error',
      Object.assign(new Error('Out of memory while allocating buffer'), { name: 'GPUOutOfMemoryError' }),
      'GPU_LOST',
    ],
    ['a failed allocation', new Error('Failed to allocate 2147483648 bytes'), 'GPU_LOST'],
    [
      'missing shader-f16',
      new Error('ShaderF16SupportError: This model requires WebGPU extension shader-f16'),
      'UNSUPPORTED',
    ],
    [
      'no adapter',
      new Error('Unable to find a compatible GPU. This issue might be because your computer...'),
      'UNSUPPORTED',
    ],
    [
      'an unknown model id',
      new Error('ModelNotFoundError: Cannot find model record in appConfig for x'),
      'MODEL_MISSING',
    ],
    [
      'a bad model library',
      new Error('CompileError: WebAssembly.instantiate(): expected magic word 00 61 73 6d'),
      'MODEL_REJECTED',
    ],
    ['a download that failed', new TypeError("Failed to execute 'add' on 'Cache': Request failed"), 'MODEL_MISSING'],
    ['a cancel', Object.assign(new Error('aborted'), { name: 'AbortError' }), 'ABORTED'],
    ['anything else', new Error('something odd'), 'INTERNAL'],
  ])('maps %s', (_title, err, code) => {
    expect(mapWebLlmError(err, 'm').code).toBe(code);
  });

  it('tells the run layer what to do when the GPU is lost, keeping the original message', () => {
    const e = mapWebLlmError(new Error('Device was lost'), 'Qwen');
    expect(e.message).toBe(
      'Qwen: The GPU stopped working for this page (device lost or out of memory). The samples generated so far are kept: reload the page and resume the run, or choose a smaller model. (Device was lost)',
    );
  });
});
