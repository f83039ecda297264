/**
 * The chat template for models that ship none (base models, story models such as
 * stories260K): each message as `Role: content`, separated by blank lines, ending with
 * `Assistant:` so that the model continues as the assistant.
 *
 *     System: <system text>
 *
 *     User: <user text>
 *
 *     Assistant:
 *
 * Generation stops when the model starts a new turn (`PLAIN_TEMPLATE_STOP`).
 */
import type { ChatMessage } from './engine.ts';

export const PLAIN_TEMPLATE_STOP: readonly string[] = ['\nUser:', '\nSystem:'];

const LABEL: Record<ChatMessage['role'], string> = {
  system: 'System',
  user: 'User',
  assistant: 'Assistant',
  tool: 'Tool',
};

export function renderPlainChat(messages: readonly ChatMessage[]): string {
  const turns = messages.map((m) => `${LABEL[m.role]}: ${m.content.trim()}`);
  return `${turns.join('\n\n')}\n\nAssistant:`;
}
