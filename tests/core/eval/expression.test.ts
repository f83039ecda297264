import { describe, expect, it } from 'vitest';
import { evaluateExpression, parseExpression } from '../../../src/core/eval/expression.ts';
import { workbenchErrorOf as errorOf } from '../../helpers/errors.ts';

const VARS = ['ex', 'format', 'soft_f1'];
const calc = (f: string, vars: Record<string, number> = { ex: 1, format: 0, soft_f1: 0.5 }) =>
  evaluateExpression(parseExpression(f, VARS), vars);

describe('reward formula expressions', () => {
  it.each<[string, number]>([
    ['ex', 1],
    ['ex + 0.1 * format', 1],
    ['0.5 * ex + 0.5 * soft_f1', 0.75],
    ['1 - 2 - 3', -4],
    ['8 / 4 / 2', 1],
    ['2 + 3 * 4', 14],
    ['(2 + 3) * 4', 20],
    ['-ex + -(-2)', 1],
    ['+ex', 1],
    ['.5e1 + 1E-1', 5.1],
    ['  ex*format  ', 0],
  ])('evaluates %s to %s with precedence and left associativity', (f, v) => {
    expect(calc(f)).toBeCloseTo(v, 12);
  });

  it.each<[string, number, RegExp]>([
    ['ex + * format', 6, /expected a number, a variable or "\(", found "\*"/],
    ['ex + reward', 6, /unknown variable "reward" \(use ex, format, soft_f1\)/],
    ['(ex + format', 13, /expected "\)" to close the "\(" at position 1, found end of formula/],
    ['ex format', 4, /unexpected "format" after a complete expression/],
    ['ex; process.exit()', 3, /unexpected character ";"/],
    ['ex +', 5, /found end of formula/],
    ['', 1, /the formula is empty/],
    ['Math.max(ex)', 5, /unexpected character "."/],
  ])('rejects %j, naming the formula and position %i', (f, pos, message) => {
    const e = errorOf(() => parseExpression(f, VARS));
    expect(e.code).toBe('BAD_OPTION');
    expect(e.message).toContain(`reward formula ${JSON.stringify(f)}`);
    expect(e.message).toContain(`at position ${pos}`);
    expect(e.message).toMatch(message);
  });

  it('points at the problem under the formula', () => {
    expect(
      errorOf(() => parseExpression('ex + * 2', VARS))
        .message.split('\n')
        .slice(1),
    ).toEqual(['  ex + * 2', '       ^']);
  });
});
