import type { EngClient } from '@eng/sdk';
import { z } from 'zod';
import { domainError } from '../shared/errors.ts';
import { registerHandler } from '../shared/functions.ts';
import type { StateKv } from '../shared/kv.ts';
import type { GateSettings } from './config.ts';
import { globMatch, type PermissionMode } from './policy.ts';

// spec: console-worker.md §2.7 — per-session permission settings: the mode, the auto-mode trust
// list (always_allow) and remembered human grants (approved_always, honoured in every mode).

export const SETTINGS_SCOPE = 'approval-gate:settings';

export interface AlwaysAllowEntry {
  function_id: string;
  granted_at: number;
  granted_by: 'user_click' | 'seed';
}

export interface ApprovalSettings {
  mode: PermissionMode;
  mode_set_at: number;
  always_allow: AlwaysAllowEntry[];
  approved_always: AlwaysAllowEntry[];
}

export const plainId = (field: string) =>
  z
    .string({ error: (i) => (i.input === undefined ? `${field} is required` : `${field} must be a string`) })
    .min(1, { error: `${field} must not be empty` })
    .max(512, { error: `${field} is too long` })
    .refine((v) => !v.includes('/'), { error: `${field} must not contain "/"` });

const SessionInput = z.object({ session_id: plainId('session_id') });
const ModeInput = z.object({
  session_id: plainId('session_id'),
  mode: z.enum(['manual', 'auto', 'full'], { error: 'mode must be one of manual, auto, full' }),
});
const FunctionInput = z.object({
  session_id: plainId('session_id'),
  function_id: z.string({ error: (i) => (i.input === undefined ? 'function_id is required' : 'function_id must be a string') }).min(1, {
    error: 'function_id must not be empty',
  }),
});

/** A grant names one function (or one wrapper chain) literally: no glob characters. */
const GrantInput = z.object({
  session_id: plainId('session_id'),
  function_id: z
    .string({ error: (i) => (i.input === undefined ? 'function_id is required' : 'function_id must be a string') })
    .min(1, { error: 'function_id must not be empty' })
    .max(4096, { error: 'function_id is too long' })
    .refine((v) => !/[*?]/.test(v), { error: 'function_id must name one function literally (a grant is never a glob)' }),
});

export class SettingsStore {
  private readonly cache = new Map<string, ApprovalSettings | null>();
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly kv: StateKv,
    private readonly gate: () => GateSettings,
  ) {}

  /** The stored record, or null when the session never changed its settings. */
  async stored(sessionId: string): Promise<ApprovalSettings | null> {
    if (!this.cache.has(sessionId)) this.cache.set(sessionId, (await this.kv.get<ApprovalSettings>(SETTINGS_SCOPE, sessionId)) ?? null);
    return this.cache.get(sessionId) ?? null;
  }

  /** The settings in force: the stored record, else the deployment defaults. */
  async effective(sessionId: string): Promise<{ settings: ApprovalSettings; source: 'stored' | 'defaults' }> {
    const stored = await this.stored(sessionId);
    if (stored) return { settings: stored, source: 'stored' };
    return { settings: { mode: this.gate().default_mode, mode_set_at: 0, always_allow: [], approved_always: [] }, source: 'defaults' };
  }

  /** Read-modify-write of one session's record, one at a time per session. */
  mutate(sessionId: string, change: (settings: ApprovalSettings) => void): Promise<ApprovalSettings> {
    const run = async () => {
      const { settings } = await this.effective(sessionId);
      const next = structuredClone(settings);
      change(next);
      await this.kv.set(SETTINGS_SCOPE, sessionId, next);
      this.cache.set(sessionId, next);
      return next;
    };
    const previous = this.chains.get(sessionId) ?? Promise.resolve();
    const result = previous.then(run, run);
    this.chains.set(
      sessionId,
      result.catch(() => undefined),
    );
    return result;
  }

  async clear(sessionId: string): Promise<boolean> {
    const had = (await this.stored(sessionId)) !== null;
    await this.kv.delete(SETTINGS_SCOPE, sessionId);
    this.cache.set(sessionId, null);
    return had;
  }

  /** Forget a deleted session's record. */
  drop(sessionId: string): Promise<boolean> {
    return this.clear(sessionId);
  }
}

/** The auto-mode trust list, written by a person (`approval::add-always-allow`): its entries may be globs. */
export const listed = (list: AlwaysAllowEntry[], functionId: string) => list.some((e) => globMatch(e.function_id, functionId));

/**
 * Remembered grants name exactly what a person approved, a function id or a wrapper's chain
 * (issue 24 item 3): compared literally, never as a glob, so a call named `*` grants nothing else.
 */
export const granted = (list: AlwaysAllowEntry[], grantKey: string) => list.some((e) => e.function_id === grantKey);

function grant(list: AlwaysAllowEntry[], functionId: string, now: number): void {
  if (!list.some((e) => e.function_id === functionId)) list.push({ function_id: functionId, granted_at: now, granted_by: 'user_click' });
}

export function registerSettingsFunctions(client: EngClient, store: SettingsStore): void {
  const fn = <T>(id: string, description: string, schema: z.ZodType<T>, handler: (input: T) => unknown) =>
    registerHandler(client, 'approval', id, { description, schema, invalidCode: 'invalid_payload' }, async (input: T) => {
      try {
        return await handler(input);
      } catch (err) {
        const code = (err as { code?: string }).code ?? '';
        if (code.startsWith('approval/')) throw err;
        throw domainError('approval', 'state_unavailable', `${id}: ${(err as Error).message}`);
      }
    });

  fn('approval::set-mode', "Set the session's permission mode (manual / auto / full). Human/console only", ModeInput, async (input) => ({
    settings: await store.mutate(input.session_id, (s) => {
      s.mode = input.mode;
      s.mode_set_at = Date.now();
    }),
  }));
  fn(
    'approval::add-always-allow',
    "Add a function to the session's auto-mode trust list (idempotent). Human/console only",
    FunctionInput,
    async (input) => ({
      settings: await store.mutate(input.session_id, (s) => grant(s.always_allow, input.function_id, Date.now())),
    }),
  );
  fn(
    'approval::remove-always-allow',
    'Remove a function from the auto-mode trust list and the session grants (no-op when absent)',
    FunctionInput,
    async (input) => ({
      settings: await store.mutate(input.session_id, (s) => {
        s.always_allow = s.always_allow.filter((e) => e.function_id !== input.function_id);
        s.approved_always = s.approved_always.filter((e) => e.function_id !== input.function_id);
      }),
    }),
  );
  fn(
    'approval::approve-always',
    "Record a per-session 'approve always' grant for one function id (literal, never a glob), honoured in every mode. Human/console only",
    GrantInput,
    async (input) => ({
      settings: await store.mutate(input.session_id, (s) => grant(s.approved_always, input.function_id, Date.now())),
    }),
  );
  fn('approval::get-settings', "The session's effective settings (stored record or the defaults); never writes", SessionInput, (input) =>
    store.effective(input.session_id),
  );
  fn('approval::clear-settings', "Drop the session's record; it reverts to the deployment defaults", SessionInput, async (input) => ({
    cleared: await store.clear(input.session_id),
  }));
}
