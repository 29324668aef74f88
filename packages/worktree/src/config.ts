import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { describeZodError } from '@eng/protocol';
import { z } from 'zod';
import { globMatch } from './glob.ts';

// The `worktree` configuration entry (console-worker.md §4.1 "Config", with eng's brand: root
// ~/.eng/worktrees, branch prefix eng/). The same shape is the `config:` block of the worker's
// config.yaml entry, which the engine supervisor passes as ENG_WORKER_CONFIG.

/** A test command: a shell line, or an argument vector run without a shell. */
export const TestCommandSchema = z.union([z.string().min(1).max(8000), z.array(z.string().min(1).max(4000)).min(1).max(200)]);

const GatesSchema = z
  .object({
    allow_remove: z.boolean().default(true),
    allow_force: z.boolean().default(false),
    allow_branch_delete: z.boolean().default(true),
    allow_land: z.boolean().default(true),
    allow_prune: z.boolean().default(true),
    /**
     * A `test_cmd` given in the worktree::land call (any shell line, run by whoever may call land,
     * a model included). Off: only the repository's `test_commands` entry runs. A new name rather
     * than a new default of `allow_test_cmd`, which installed workers stored as `true`.
     */
    allow_caller_test_cmd: z.boolean().default(false),
    /** Replaced by allow_caller_test_cmd; accepted so stored entries stay valid, otherwise ignored. */
    allow_test_cmd: z.boolean().optional().describe('deprecated and ignored: see allow_caller_test_cmd'),
    /** Target branches a land may advance; `*` matches any run of characters. */
    land_targets: z.array(z.string().min(1)).default(['*']),
    /** Repositories (absolute paths, `*` wildcards) worktrees may be created in. */
    repos: z.array(z.string().min(1)).default(['*']),
    /** Managed worktrees per repository; 0 means no limit. */
    max_worktrees_per_repo: z.number().int().min(0).default(0),
  })
  .strict();

export const WorktreeConfigSchema = z
  .object({
    worktree_root: z.string().min(1).default('~/.eng/worktrees'),
    branch_prefix: z
      .string()
      .default('eng/')
      .refine((p) => !p.startsWith('-') && !/[\s~^:?*[\\]/.test(p), 'must be usable in a branch name (no leading -, spaces or ~^:?*[\\)'),
    /** Cron expression (6 or 7 fields, seconds first) of the prune sweep; empty disables it. */
    prune_schedule: z.string().default('0 0 * * * *'),
    prune_expire_hours: z.number().min(0).default(72),
    land_queue: z.string().min(1).default('worktree-land'),
    max_land_retries: z.number().int().min(0).max(20).default(3),
    git_timeout_ms: z.number().int().min(100).default(60_000),
    test_timeout_ms: z.number().int().min(100).default(600_000),
    /**
     * The land's test gate per repository: keys are repository paths (`*` wildcards), the first
     * that matches (in the order written) gives the command, a shell line or an argument vector.
     */
    test_commands: z.record(z.string().min(1), TestCommandSchema).default({}),
    /** More variables (names, `*` wildcards) a test command gets on top of the allowlist; credential-like names never pass. */
    test_env: z.array(z.string().min(1)).default([]),
    /** Committer of the commits a land's rebase writes (GIT_COMMITTER_NAME/EMAIL); unset, git's own identity. */
    committer: z
      .object({ name: z.string().min(1), email: z.string().min(1) })
      .strict()
      .optional(),
    gates: GatesSchema.prefault({}),
  })
  .strict();

export type WorktreeConfig = z.output<typeof WorktreeConfigSchema>;
export type Gates = WorktreeConfig['gates'];

export const DEFAULT_CONFIG: WorktreeConfig = WorktreeConfigSchema.parse({});

/** The configured test command of a repository (`test_commands`), if any. */
export function configuredTestCommand(config: WorktreeConfig, repoPath: string): string | string[] | undefined {
  for (const [pattern, command] of Object.entries(config.test_commands)) if (globMatch(pattern, repoPath)) return command;
  return undefined;
}

/** Validate a config value (stored entry, ENG_WORKER_CONFIG); the error names the field. */
export function parseConfig(value: unknown, source: string): WorktreeConfig {
  const parsed = WorktreeConfigSchema.safeParse(value ?? {});
  if (!parsed.success) throw new Error(`${source}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** ENG_WORKER_CONFIG: the config block of the worker's config.yaml entry, as JSON. */
export function configFromEnv(raw: string | undefined): Record<string, unknown> {
  if (!raw || raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new Error(`ENG_WORKER_CONFIG is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('ENG_WORKER_CONFIG must be a JSON object');
  parseConfig(value, 'ENG_WORKER_CONFIG');
  return value as Record<string, unknown>;
}

/**
 * eng's home folder: `$ENG_HOME`, else `~/.eng`, as the engine CLI reads it
 * (packages/engine/src/config/resolve.ts), so one variable moves every component's files.
 */
export function engHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.ENG_HOME || join(homedir(), '.eng');
}

/**
 * The worktree root as an absolute path (`~` expanded, relative paths against the home directory).
 * `~/.eng/…`, the default's form, is read under `$ENG_HOME` when that is set.
 */
export function resolveRoot(root: string, env: NodeJS.ProcessEnv = process.env): string {
  if (root === '~/.eng' || root.startsWith('~/.eng/')) return join(engHome(env), root.slice('~/.eng'.length));
  if (root === '~') return homedir();
  if (root.startsWith('~/')) return join(homedir(), root.slice(2));
  return isAbsolute(root) ? resolve(root) : resolve(homedir(), root);
}

/** JSON Schema of the entry for `configuration::register` (the console's Config page edits it). */
export const CONFIG_JSON_SCHEMA: Record<string, unknown> = (() => {
  const schema = z.toJSONSchema(WorktreeConfigSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
})();
