import { EngError } from '@eng/protocol';
import type { EngClient } from '@eng/sdk';
import { type FunctionRow, toolName } from './exposure.ts';

// What eng-mcp reads from the engine, through the SDK only (ARCHITECTURE: every surface is a worker).
// spec: engine-protocol §4.1; mcp.md §18 (slim listing rows on newer iii engines).

const LIST_FUNCTIONS = 'engine::functions::list';
const FUNCTION_INFO = 'engine::functions::info';
const LIST_WORKERS = 'engine::workers::list';
const LIST_REGISTERED_TRIGGERS = 'engine::registered-triggers::list';
const LIST_TRIGGERS_011 = 'engine::triggers::list';
const INFO_BATCH = 32;
/** eng engines: a call made only if the function's metadata still holds the expected values. */
export const GUARDED_INVOKE = 'engine::functions::invoke';

export interface TriggerRow {
  id: string;
  trigger_type: string;
  function_id: string;
  config?: unknown;
  [key: string]: unknown;
}

export interface WorkerRow {
  id: string;
  name?: string;
  functions?: string[];
  [key: string]: unknown;
}

const codeOf = (err: unknown) => (err as { code?: string } | null)?.code;

export class EngineView {
  /**
   * The functions as of the latest full listing (every tools/list and every watcher refresh, which
   * runs on each `engine::functions-available` event). Only a hint for the guarded fast path: the
   * engine itself checks exposure at dispatch time, so a stale row can cost a fallback, never a
   * call the policy forbids.
   */
  private mirror = new Map<string, FunctionRow>();
  /** Tool name → function id over the mirror, built when first asked after each listing. */
  private byTool?: Map<string, string>;
  /** Whether the connected engine serves GUARDED_INVOKE: unknown until asked, per connection. */
  private guarded: boolean | Promise<boolean> | undefined;

  constructor(
    private readonly client: EngClient,
    private readonly timeoutMs = 10_000,
  ) {
    // another engine may answer after a reconnect: forget what this one had and could do
    const forget = () => {
      this.mirror = new Map();
      this.byTool = undefined;
      this.guarded = undefined;
    };
    client.on('connected', forget);
    client.on('disconnected', forget);
  }

  /** The mirrored row of `functionId`, if the latest listing had it. */
  mirrored(functionId: string): FunctionRow | undefined {
    return this.mirror.get(functionId);
  }

  /**
   * The function id behind a tool name in the latest listing. Names that are not the plain `::` →
   * `__` spelling (a literal `__` in the id, characters or lengths providers refuse) can only be
   * reversed this way.
   */
  idForTool(name: string): string | undefined {
    if (!this.byTool) {
      this.byTool = new Map();
      for (const id of this.mirror.keys()) {
        const tool = toolName(id);
        if (!this.byTool.has(tool)) this.byTool.set(tool, id);
      }
    }
    return this.byTool.get(name);
  }

  /** True once the engine is known to serve GUARDED_INVOKE; the first ask starts the probe and answers false. */
  guardedInvokeReady(): boolean {
    if (this.guarded === undefined && this.connected) {
      const probe = this.functionInfo(GUARDED_INVOKE).then(
        (row) => {
          if (this.guarded === probe) this.guarded = row !== null;
          return row !== null;
        },
        () => {
          if (this.guarded === probe) this.guarded = undefined;
          return false;
        },
      );
      this.guarded = probe;
    }
    return this.guarded === true;
  }

  /** The engine turned out not to serve GUARDED_INVOKE after all. */
  guardedInvokeMissing(): void {
    this.guarded = false;
  }

  /** False while the engine connection is down (calls would wait for it). */
  get connected(): boolean {
    return this.client.workerId !== undefined;
  }

  /** True once connected, waiting at most `ms` (startup races: the client may be quicker than the engine handshake). */
  async waitConnected(ms = 1000): Promise<boolean> {
    if (this.connected) return true;
    await this.client.ready({ timeoutMs: ms }).catch(() => undefined);
    return this.connected;
  }

  /**
   * One engine call. The fail-fast rule of every path (tools, resources, prompts, completions):
   * while the engine is unreachable a call fails after at most a second instead of waiting out
   * its timeout for a connection that is not there.
   */
  private async call<T>(functionId: string, payload: unknown): Promise<T> {
    if (!(await this.waitConnected())) throw new EngError('not_connected', 'the eng engine is not connected');
    return this.client.trigger<T>({ function_id: functionId, payload, timeoutMs: this.timeoutMs });
  }

  /** Non-internal functions; slim rows (no schemas) are completed with `engine::functions::info`. */
  async listFunctions(): Promise<FunctionRow[]> {
    const result = await this.call<{ functions?: FunctionRow[] }>(LIST_FUNCTIONS, {});
    const rows = Array.isArray(result?.functions) ? result.functions.filter((f) => typeof f?.function_id === 'string') : [];
    const slim = rows.filter((row) => !('request_format' in row));
    if (slim.length === 0) return this.remember(rows);
    const details = new Map<string, FunctionRow>();
    for (let i = 0; i < slim.length; i += INFO_BATCH) {
      const ids = slim.slice(i, i + INFO_BATCH).map((row) => row.function_id);
      try {
        const info = await this.call<{ functions?: Array<FunctionRow & { request_schema?: unknown; response_schema?: unknown }> }>(
          FUNCTION_INFO,
          { function_ids: ids },
        );
        for (const d of info?.functions ?? []) details.set(d.function_id, d);
      } catch {
        break; // an engine without the detail call: keep the rows as they are
      }
    }
    return this.remember(
      rows.map((row) => {
        const d = details.get(row.function_id) as (FunctionRow & { request_schema?: unknown; response_schema?: unknown }) | undefined;
        if (!d) return row;
        return { ...row, request_format: d.request_format ?? d.request_schema, response_format: d.response_format ?? d.response_schema };
      }),
    );
  }

  private remember(rows: FunctionRow[]): FunctionRow[] {
    this.mirror = new Map(rows.map((row) => [row.function_id, row]));
    this.byTool = undefined;
    return rows;
  }

  /**
   * One function as the engine knows it right now (the fresh re-check of seed §4.3 rule 4c), or
   * null when it does not exist. Engines without `engine::functions::info` fall back to the list.
   */
  async functionInfo(functionId: string): Promise<FunctionRow | null> {
    try {
      const d = await this.call<FunctionRow & { request_schema?: unknown; response_schema?: unknown }>(FUNCTION_INFO, {
        function_id: functionId,
      });
      if (!d || typeof d.function_id !== 'string') return null;
      return { ...d, request_format: d.request_format ?? d.request_schema, response_format: d.response_format ?? d.response_schema };
    } catch (err) {
      if (codeOf(err) === 'NOT_FOUND') return null;
      if (codeOf(err) !== 'function_not_found') throw err;
    }
    return (await this.listFunctions()).find((row) => row.function_id === functionId) ?? null;
  }

  async listWorkers(): Promise<WorkerRow[]> {
    const result = await this.call<{ workers?: WorkerRow[] }>(LIST_WORKERS, {});
    return Array.isArray(result?.workers) ? result.workers : [];
  }

  async listTriggers(): Promise<TriggerRow[]> {
    try {
      const result = await this.call<{ registered_triggers?: TriggerRow[] }>(LIST_REGISTERED_TRIGGERS, {});
      return Array.isArray(result?.registered_triggers) ? result.registered_triggers : [];
    } catch (err) {
      if (codeOf(err) !== 'function_not_found') throw err;
    }
    // engine 0.11: instances are listed by engine::triggers::list
    const result = await this.call<{ triggers?: TriggerRow[] }>(LIST_TRIGGERS_011, {});
    return Array.isArray(result?.triggers) ? result.triggers : [];
  }

  async triggerInfo(id: string): Promise<TriggerRow | null> {
    try {
      return await this.call<TriggerRow>('engine::registered-triggers::info', { id });
    } catch (err) {
      if (codeOf(err) === 'NOT_FOUND') return null;
      throw err;
    }
  }
}
