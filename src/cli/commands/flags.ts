/** Strict flag parsing for every CLI command: an unknown or malformed flag is a BAD_OPTION error ending with the command's usage. */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { WorkbenchError } from '../../core/errors.ts';

export function parseFlags<O extends ParseArgsOptionsConfig>(argv: string[], options: O, usage: string, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, strict: true, allowPositionals, options });
  } catch (err) {
    throw new WorkbenchError('BAD_OPTION', `${(err as Error).message}\n${usage}`);
  }
}

/** A BAD_OPTION error naming the flag. */
export const bad = (flag: string, msg: string) => new WorkbenchError('BAD_OPTION', msg, flag);
