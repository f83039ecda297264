/** Types of scripts/build-cli.mjs (plain JavaScript, run before anything is built). */
export const ROOT: string;
export const OUT_DIR: string;
export const SOURCE_DIRS: string[];
export function buildCli(): Promise<void>;
