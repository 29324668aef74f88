/**
 * The land dialog's test command, as the worktree worker's `worktree` configuration entry decides
 * it (packages/worktree/README.md "Configuration entry"): a caller's `test_cmd` is refused with
 * W500 unless `gates.allow_caller_test_cmd` is on; otherwise the repository's entry of
 * `test_commands` runs (the first key that matches, `*` wildcards, in the order written).
 */

export interface LandTestGate {
  /** The entry was read. False: an engine without `configuration::*` (the worker then runs on its ENG_WORKER_CONFIG), or the read failed. */
  known: boolean;
  /** `gates.allow_caller_test_cmd`: a land's caller may give its own test command. */
  allowCaller: boolean;
  /** The repository's entry of `test_commands`: what runs when the land gives none. */
  configured?: string | string[];
}

/** `*` matches any run of characters, `?` one character; everything else literally (the worker's glob). */
export function globMatch(pattern: string, value: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(value);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What the stored value of the `worktree` entry (`null`: not read) says about lands in `repoPath`. */
export function landTestGate(value: unknown, repoPath: string): LandTestGate {
  if (!isRecord(value)) return { known: false, allowCaller: false };
  const gates = isRecord(value.gates) ? value.gates : {};
  const commands = isRecord(value.test_commands) ? value.test_commands : {};
  let configured: string | string[] | undefined;
  for (const [pattern, command] of Object.entries(commands)) {
    if (!globMatch(pattern, repoPath)) continue;
    if (typeof command === 'string' || (Array.isArray(command) && command.every((a) => typeof a === 'string'))) configured = command;
    break;
  }
  return { known: true, allowCaller: gates.allow_caller_test_cmd === true, ...(configured ? { configured } : {}) };
}

/** A test command as one line: a shell line as written, an argument vector with the arguments that need it quoted. */
export function formatTestCommand(command: string | string[]): string {
  if (typeof command === 'string') return command;
  return command.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** The worker's W500 for a caller's `test_cmd` (gates.allow_caller_test_cmd off), as opposed to any other refusal. */
export function isCallerTestCmdRefusal(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  return e?.code === 'W500' && typeof e.message === 'string' && e.message.includes('allow_caller_test_cmd');
}

/** The worker's message without the code it already starts with (`W500: …`), so a note does not show it twice. */
export function withoutCode(error: unknown): { code?: string; message: string } {
  const e = error as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  return { ...(code ? { code } : {}), message: code && message.startsWith(`${code}: `) ? message.slice(code.length + 2) : message };
}
