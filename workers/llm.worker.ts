/**
 * GPU engine worker: web-llm's own worker protocol (WebWorkerMLCEngineHandler), nothing else.
 * No comlink here: the two protocols would both claim every message. The only file that
 * imports web-llm statically; the page reaches it through CreateWebWorkerMLCEngine, imported
 * dynamically by src/adapters/engines/webllm-engine.ts so the main bundle stays small.
 */
import { WebWorkerMLCEngineHandler } from '@mlc-ai/web-llm';

const handler = new WebWorkerMLCEngineHandler();
self.onmessage = (message: MessageEvent) => handler.onmessage(message);
