/**
 * Words for the device an engine reported (EngineDevice, RunHeader.device), shared by the
 * engine panel and the run dashboard so both name a device the same way.
 */

const NAMES: Record<string, string> = { webgpu: 'WebGPU', cpu: 'CPU', server: 'server', none: 'no model (replay)' };

export function deviceName(device: string): string {
  return NAMES[device] ?? device;
}

/** Where the engine learnt its device, by engine kind: not configured, found out. */
export function deviceSource(engineKind: string): string {
  switch (engineKind) {
    case 'wllama':
      return "read from llama.cpp's log";
    case 'webllm':
      return 'web-llm runs only on WebGPU; the adapter navigator.gpu gave';
    case 'openai':
      return 'the model runs on the server; named by its replies';
    case 'batch':
      return 'the servers that ran the batch file, as its output lines name them';
    default:
      return 'as the engine reports it';
  }
}
