/**
 * A tiny arithmetic language for reward formulas such as `ex + 0.1 * format`: numbers,
 * variables from a fixed list, + - * /, unary minus and parentheses. Parsed by recursive
 * descent into a tree and evaluated by walking it, so no text is ever run as code.
 */
import { WorkbenchError } from '../errors.ts';

type Expr =
  | { kind: 'num'; value: number }
  | { kind: 'var'; name: string }
  | { kind: 'neg'; arg: Expr }
  | { kind: 'bin'; op: BinOp; left: Expr; right: Expr };

type BinOp = '+' | '-' | '*' | '/';

interface Token {
  kind: 'num' | 'ident' | 'op' | 'end';
  text: string;
  /** 0-based offset in the formula. */
  pos: number;
}

function fail(formula: string, pos: number, problem: string): never {
  throw new WorkbenchError(
    'BAD_OPTION',
    `reward formula ${JSON.stringify(formula)}: ${problem} at position ${pos + 1}\n  ${formula}\n  ${' '.repeat(pos)}^`,
  );
}

function tokenize(formula: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < formula.length) {
    const c = formula[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const num = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(formula.slice(i));
    if (num) {
      tokens.push({ kind: 'num', text: num[0], pos: i });
      i += num[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_]*/.exec(formula.slice(i));
    if (ident) {
      tokens.push({ kind: 'ident', text: ident[0], pos: i });
      i += ident[0].length;
      continue;
    }
    if ('+-*/()'.includes(c)) {
      tokens.push({ kind: 'op', text: c, pos: i });
      i++;
      continue;
    }
    fail(
      formula,
      i,
      `unexpected character ${JSON.stringify(c)} (allowed: numbers, variables, + - * / and parentheses)`,
    );
  }
  tokens.push({ kind: 'end', text: '', pos: formula.length });
  return tokens;
}

/** Parses `formula`; variables must be among `variables`. Errors name the formula and the position. */
export function parseExpression(formula: string, variables: readonly string[]): Expr {
  const tokens = tokenize(formula);
  let k = 0;
  const peek = () => tokens[k]!;
  const describe = (t: Token) => (t.kind === 'end' ? 'end of formula' : JSON.stringify(t.text));

  const primary = (): Expr => {
    const t = peek();
    if (t.kind === 'num') {
      k++;
      return { kind: 'num', value: Number(t.text) };
    }
    if (t.kind === 'ident') {
      if (!variables.includes(t.text))
        fail(formula, t.pos, `unknown variable ${JSON.stringify(t.text)} (use ${variables.join(', ')})`);
      k++;
      return { kind: 'var', name: t.text };
    }
    if (t.text === '(') {
      k++;
      const inner = sum();
      if (peek().text !== ')')
        fail(formula, peek().pos, `expected ")" to close the "(" at position ${t.pos + 1}, found ${describe(peek())}`);
      k++;
      return inner;
    }
    return fail(formula, t.pos, `expected a number, a variable or "(", found ${describe(t)}`);
  };
  const unary = (): Expr => {
    const t = peek();
    if (t.text === '-' || t.text === '+') {
      k++;
      const arg = unary();
      return t.text === '-' ? { kind: 'neg', arg } : arg;
    }
    return primary();
  };
  /** `operand`s joined by the operators `ops`, left-associative. */
  const chain = (ops: readonly BinOp[], operand: () => Expr): Expr => {
    let left = operand();
    while ((ops as readonly string[]).includes(peek().text)) {
      const op = peek().text as BinOp;
      k++;
      left = { kind: 'bin', op, left, right: operand() };
    }
    return left;
  };
  const product = (): Expr => chain(['*', '/'], unary);
  function sum(): Expr {
    return chain(['+', '-'], product);
  }

  if (peek().kind === 'end') fail(formula, 0, 'the formula is empty');
  const tree = sum();
  if (peek().kind !== 'end') fail(formula, peek().pos, `unexpected ${describe(peek())} after a complete expression`);
  return tree;
}

export function evaluateExpression(e: Expr, vars: Readonly<Record<string, number>>): number {
  switch (e.kind) {
    case 'num':
      return e.value;
    case 'var':
      return vars[e.name]!;
    case 'neg':
      return -evaluateExpression(e.arg, vars);
    case 'bin': {
      const l = evaluateExpression(e.left, vars);
      const r = evaluateExpression(e.right, vars);
      return e.op === '+' ? l + r : e.op === '-' ? l - r : e.op === '*' ? l * r : l / r;
    }
  }
}

/** Names of the variables a tree uses. */
export function variablesOf(e: Expr): Set<string> {
  const out = new Set<string>();
  const walk = (x: Expr): void => {
    if (x.kind === 'var') out.add(x.name);
    else if (x.kind === 'neg') walk(x.arg);
    else if (x.kind === 'bin') {
      walk(x.left);
      walk(x.right);
    }
  };
  walk(e);
  return out;
}
