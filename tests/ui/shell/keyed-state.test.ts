import { describe, expect, it } from 'vitest';
import { KeyedState } from '../../../src/ui/shell/keyed-state.ts';

describe('KeyedState: the one lifecycle of a screen state', () => {
  it('hands back the same state for the same key, disposes the old one on a new key, and on release only the current one', () => {
    const made: string[] = [];
    const disposed: string[] = [];
    const states = new KeyedState(
      (key) => (made.push(key), { key }),
      (s) => disposed.push(s.key),
    );
    const a = states.get('a');
    expect(states.get('a')).toBe(a);
    expect(states.current).toBe(a);
    const b = states.get('b');
    expect(b).not.toBe(a);
    expect([made, disposed]).toEqual([['a', 'b'], ['a']]);
    // The page of run a unmounts after the page of run b was built: b is kept.
    states.release(a);
    expect(states.current).toBe(b);
    expect(disposed).toEqual(['a']);
    states.release(b);
    expect(states.current).toBeNull();
    expect(disposed).toEqual(['a', 'b']);
    expect(states.get('b')).not.toBe(b);
    states.clear();
    expect(disposed).toEqual(['a', 'b', 'b']);
  });
});
