import { describe, expect, it, vi } from 'vitest';
import type { WorkbenchServices } from '../../../src/ui/context/services.ts';
import { ScreenKind, Workbench } from '../../../src/ui/context/workbench.svelte.ts';
import { PAGE_LIFE } from '../../../src/ui/shell/keyed-state.ts';

// The constructor only keeps the store for the lists; nothing here reads it. The router reads the address.
vi.stubGlobal('location', { hash: '' });
vi.stubGlobal('window', { addEventListener: () => undefined });
const services = () => ({ store: {} }) as unknown as WorkbenchServices;

describe("the workbench's registry of screen states (docs/ui-state.md)", () => {
  it('keeps one KeyedState per kind for the workbench: the same state for a key on every call, built with that workbench, disposed on another key or release', () => {
    const made: Array<{ wb: Workbench; key: string }> = [];
    const disposed: string[] = [];
    const kind = new ScreenKind(
      (wb, key) => {
        const s = { wb, key };
        made.push(s);
        return s;
      },
      (s) => disposed.push(s.key),
    );
    const wb = new Workbench(services());
    expect(kind.of(wb)).toBe(wb.screen(kind));
    const page = kind.of(wb).get(PAGE_LIFE);
    expect(kind.of(wb).get(PAGE_LIFE)).toBe(page);
    expect(page.wb).toBe(wb);
    // Another workbench has its own.
    const other = new Workbench(services());
    expect(kind.of(other).get(PAGE_LIFE)).not.toBe(page);
    expect(made.map((m) => m.wb)).toEqual([wb, other]);
    // Another key replaces the state (the old one disposed); release disposes the current one.
    const run = kind.of(wb).get('run-1');
    expect(disposed).toEqual([PAGE_LIFE]);
    kind.of(wb).release(run);
    expect(disposed).toEqual([PAGE_LIFE, 'run-1']);
    expect(kind.of(wb).current).toBeNull();
    // Two kinds never share a state, even with the same factory.
    const twin = new ScreenKind(kind.make, kind.dispose);
    expect(twin.of(wb).get(PAGE_LIFE)).not.toBe(kind.of(wb).get(PAGE_LIFE));
  });
});
