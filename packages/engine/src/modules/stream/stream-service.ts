import { EngError, ErrorCode } from '@eng/protocol';
import type { ModuleContext } from '../../core/module.ts';
import { compareKeys } from '../../stores/memory.ts';
import type { KvStore } from '../../stores/types.ts';
import { applyUpdateOps, type UpdateOp } from '../../stores/update-ops.ts';
import { checkValueSize, storeCall } from '../state/schemas.ts';
import { StateService } from '../state/state-service.ts';
import type { RemoteStreams } from './bridge.ts';
import { type StreamMessage, streamMessage } from './triggers.ts';

type BackendOp = 'get' | 'set' | 'delete' | 'list' | 'list_groups' | 'update';

/** Items of stream S, group G live in store scope `["S","G"]`: unambiguous for any names, and `["S",` prefixes a stream. */
export function groupScope(streamName: string, groupId: string): string {
  return JSON.stringify([streamName, groupId]);
}
function streamPrefix(streamName: string): string {
  return `${JSON.stringify([streamName]).slice(0, -1)},`;
}
function parseScope(scope: string): [string, string] | undefined {
  try {
    const parsed = JSON.parse(scope);
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      return parsed as [string, string];
    }
  } catch {
    // not one of ours
  }
  return undefined;
}

interface ItemAddress {
  stream_name: string;
  group_id: string;
  item_id: string;
}

/**
 * Stream operations (spec §4.5): items in the store, or in a worker's custom backend when a
 * function `stream::<op>(<stream_name>)` is registered (the input object is forwarded as is).
 * Every change is handed to `emit`, which feeds triggers, sockets and other engines.
 */
export class StreamService {
  private readonly items: StateService;

  constructor(
    private readonly ctx: ModuleContext<unknown>,
    readonly store: KvStore,
    private readonly maxValueBytes: number,
    private readonly emit: (message: StreamMessage) => void,
    /** The bridge adapter: every stream's items live in another engine (its `stream::<op>` answers). */
    private readonly remote?: RemoteStreams,
  ) {
    // state semantics (update ops, size checks, error codes) over the stream's scopes; events are ours
    this.items = new StateService(store, maxValueBytes, () => {});
  }

  /** Who holds the stream's items besides the store: the bridged engine, or a worker's custom backend. */
  private backend(op: BackendOp, streamName: string): { id: string; call(raw: unknown): Promise<unknown> } | undefined {
    const remote = this.remote;
    if (remote) return { id: `stream::${op}`, call: (raw) => remote(`stream::${op}`, raw) };
    const id = `stream::${op}(${streamName})`;
    return this.ctx.core.functions.has(id) ? { id, call: (raw) => this.ctx.call(id, raw) } : undefined;
  }

  async set(input: ItemAddress & { data: unknown }, raw: unknown): Promise<{ old_value: unknown; new_value: unknown }> {
    const custom = this.backend('set', input.stream_name);
    let result: { old_value: unknown; new_value: unknown };
    if (custom) {
      const answer = (await custom.call(raw)) as { old_value?: unknown; new_value?: unknown } | null | undefined;
      result = { old_value: answer?.old_value ?? null, new_value: answer?.new_value !== undefined ? answer.new_value : input.data };
    } else {
      result = await this.items.set(groupScope(input.stream_name, input.group_id), input.item_id, input.data);
    }
    this.changed(input, result.old_value, result.new_value);
    return result;
  }

  async get(input: ItemAddress, raw: unknown): Promise<unknown> {
    const custom = this.backend('get', input.stream_name);
    if (custom) return custom.call(raw);
    return this.items.get(groupScope(input.stream_name, input.group_id), input.item_id);
  }

  async delete(input: ItemAddress, raw: unknown): Promise<{ old_value: unknown }> {
    const custom = this.backend('delete', input.stream_name);
    let old: unknown;
    if (custom) {
      const answer = (await custom.call(raw)) as { old_value?: unknown } | null | undefined;
      old = answer?.old_value ?? null;
    } else {
      old = (await this.items.delete(groupScope(input.stream_name, input.group_id), input.item_id)) ?? null;
    }
    // spec §4.5: `delete` is emitted only when the item existed
    if (old !== null) this.emit(streamMessage(input.stream_name, input.group_id, input.item_id, { type: 'delete', data: old }));
    return { old_value: old };
  }

  async list(input: { stream_name: string; group_id: string }, raw: unknown): Promise<unknown[]> {
    const custom = this.backend('list', input.stream_name);
    if (custom) return ((await custom.call(raw)) as unknown[] | null) ?? [];
    const entries = await this.items.list(groupScope(input.stream_name, input.group_id), {});
    return entries.map((e) => e.value);
  }

  async listGroups(input: { stream_name: string }, raw: unknown): Promise<string[]> {
    const custom = this.backend('list_groups', input.stream_name);
    if (custom) return ((await custom.call(raw)) as string[] | null) ?? [];
    const scopes = await storeCall(ErrorCode.ListGroupsError, () => this.store.scopes(streamPrefix(input.stream_name)));
    return scopes
      .map((s) => parseScope(s)?.[1])
      .filter((g): g is string => g !== undefined)
      .sort(compareKeys);
  }

  async update(input: ItemAddress & { ops: UpdateOp[] }, raw: unknown) {
    const custom = this.backend('update', input.stream_name);
    let result: { old_value: unknown; new_value: unknown; errors?: unknown[] };
    if (custom) {
      const answer = (await custom.call(raw)) as typeof result | null;
      if (!answer || typeof answer !== 'object') throw new EngError(ErrorCode.SetError, `${custom.id} returned no update result`);
      result = answer;
    } else if (this.backend('get', input.stream_name) && this.backend('set', input.stream_name)) {
      result = await this.updateThroughBackend(input);
      // set() above already emitted the change
      return result;
    } else {
      const { outcome, written } = await this.items.applyUpdate(groupScope(input.stream_name, input.group_id), input.item_id, input.ops);
      if (!written) return outcome; // no op applied: nothing changed, nothing to tell
      result = outcome;
    }
    this.changed(input, result.old_value, result.new_value);
    return result;
  }

  /** `createStream` backends register no `update` (spec §4.5): read, apply the ops here, write back. Not atomic. */
  private async updateThroughBackend(input: ItemAddress & { ops: UpdateOp[] }) {
    const address = { stream_name: input.stream_name, group_id: input.group_id, item_id: input.item_id };
    const current = await this.get(address, address);
    const applied = applyUpdateOps(current ?? undefined, input.ops);
    const errors = applied.errors.length ? { errors: applied.errors } : {};
    if (applied.applied === 0) return { old_value: current ?? null, new_value: current ?? null, ...errors };
    checkValueSize(applied.value, this.maxValueBytes);
    const written = await this.set({ ...address, data: applied.value }, { ...address, data: applied.value });
    return { old_value: written.old_value, new_value: written.new_value, ...errors };
  }

  /** spec §4.5: a custom event to the group (and item, when `id` is given); returns null. */
  send(input: { stream_name: string; group_id: string; id?: string; type: string; data?: unknown }): null {
    const data = input.data === undefined ? null : input.data;
    this.emit(streamMessage(input.stream_name, input.group_id, input.id, { type: 'event', event: { type: input.type, data } }));
    return null;
  }

  async listAll(): Promise<{ stream: Array<{ id: string; groups: string[] }>; count: number }> {
    if (this.remote)
      return (await this.remote('stream::list_all', {})) as { stream: Array<{ id: string; groups: string[] }>; count: number };
    const scopes = await storeCall(ErrorCode.ListError, () => this.store.scopes());
    const byStream = new Map<string, string[]>();
    for (const scope of scopes) {
      const parsed = parseScope(scope);
      if (!parsed) continue;
      const groups = byStream.get(parsed[0]) ?? [];
      groups.push(parsed[1]);
      byStream.set(parsed[0], groups);
    }
    const stream = [...byStream].sort(([a], [b]) => compareKeys(a, b)).map(([id, groups]) => ({ id, groups: groups.sort(compareKeys) }));
    return { stream, count: stream.length };
  }

  /** Sync data for a subscriber (spec §6.2): the item (or null), or the group's items when no id. */
  async snapshot(streamName: string, groupId: string, id: string | undefined): Promise<unknown> {
    if (id === undefined) return this.list({ stream_name: streamName, group_id: groupId }, { stream_name: streamName, group_id: groupId });
    const address = { stream_name: streamName, group_id: groupId, item_id: id };
    return (await this.get(address, address)) ?? null;
  }

  private changed(address: ItemAddress, old: unknown, next: unknown): void {
    const type = old === null || old === undefined ? 'create' : 'update';
    this.emit(streamMessage(address.stream_name, address.group_id, address.item_id, { type, data: next }));
  }
}
