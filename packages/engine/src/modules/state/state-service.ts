import { EngError, ErrorCode } from '@eng/protocol';
import { JsonText } from '../../core/invoker.ts';
import { KEEP_CURRENT, type KvEntry, type KvStore } from '../../stores/types.ts';
import { type AppliedUpdate, applyUpdateOps, type UpdateOp, type UpdateOpError } from '../../stores/update-ops.ts';
import { checkValueSize, storeCall, storeError } from './schemas.ts';
import { type StateEvent, stateEvent } from './triggers.ts';

export interface UpdateOutcome {
  old_value: unknown;
  new_value: unknown;
  errors?: UpdateOpError[];
}

/**
 * The state operations over a store (spec §4.4), emitting a `state` event after every write
 * that changed something. Used by the `state::*` functions; result shapes are the wire ones.
 */
export class StateService {
  constructor(
    readonly store: KvStore,
    private readonly maxValueBytes: number,
    /** `traceparent`: the context of the write (the `state::*` call's), parent of the trigger span. */
    private readonly emit: (event: StateEvent, traceparent?: string) => void,
    /** False while no state trigger (nor another engine) listens: writes then build no event. */
    private readonly wantsEvents: () => boolean = () => true,
  ) {}

  /**
   * `state::set` for a bus caller: the value is serialised once (size check and storage), and the
   * result `{old_value, new_value}` is written from the stored texts without parsing them. The
   * `state` event is only built when something listens. A store that writes in place (memory)
   * answers synchronously; the others resolve once the write is stored (SQLite: committed).
   */
  setJson(
    scope: string,
    key: string,
    value: unknown,
    traceparent?: string,
  ): JsonText | Promise<JsonText | { old_value: unknown; new_value: unknown }> {
    const store = this.store;
    if (!store.setText) return this.set(scope, key, value, traceparent);
    const text = JSON.stringify(value) ?? 'null';
    // a UTF-8 character is at most 3 bytes per UTF-16 unit: most values need no byte count
    if (text.length * 3 > this.maxValueBytes) {
      const bytes = Buffer.byteLength(text);
      if (bytes > this.maxValueBytes) {
        throw new EngError(ErrorCode.ValueTooLarge, `value is ${bytes} bytes, over the limit of ${this.maxValueBytes} (max_value_bytes)`);
      }
    }
    if (store.writeTextNow) {
      let oldText: string | undefined;
      try {
        oldText = store.writeTextNow(scope, key, text);
      } catch (err) {
        throw storeError(ErrorCode.SetError, err);
      }
      return this.written(scope, key, value, text, oldText, traceparent);
    }
    return storeCall(ErrorCode.SetError, () => store.setText?.(scope, key, text) as Promise<string | undefined>).then((oldText) =>
      this.written(scope, key, value, text, oldText, traceparent),
    );
  }

  /** After a set stored `text` over `oldText`: the event (when something listens) and the result. */
  private written(scope: string, key: string, value: unknown, text: string, oldText: string | undefined, traceparent?: string): JsonText {
    if (this.wantsEvents()) this.emit(stateEvent(scope, key, oldText === undefined ? undefined : JSON.parse(oldText), value), traceparent);
    return new JsonText(`{"old_value":${oldText ?? 'null'},"new_value":${text}}`);
  }

  /**
   * `state::get` for a bus caller: the stored text as it is (no result when missing), read in
   * place when the store can (memory, SQLite), so no promise is made.
   */
  getJson(scope: string, key: string): JsonText | undefined | Promise<JsonText | undefined | unknown> {
    const store = this.store;
    if (store.readTextNow) {
      let text: string | undefined;
      try {
        text = store.readTextNow(scope, key);
      } catch (err) {
        throw storeError(ErrorCode.GetError, err);
      }
      return text === undefined ? undefined : new JsonText(text);
    }
    const getText = store.getText;
    if (!getText) return this.get(scope, key);
    return storeCall(ErrorCode.GetError, () => getText.call(store, scope, key)).then((text) =>
      text === undefined ? undefined : new JsonText(text),
    );
  }

  async set(scope: string, key: string, value: unknown, traceparent?: string): Promise<{ old_value: unknown; new_value: unknown }> {
    checkValueSize(value, this.maxValueBytes);
    const old = await storeCall(ErrorCode.SetError, () => this.store.set(scope, key, value));
    if (this.wantsEvents()) this.emit(stateEvent(scope, key, old, value), traceparent);
    return { old_value: old ?? null, new_value: value };
  }

  get(scope: string, key: string): Promise<unknown | undefined> {
    return storeCall(ErrorCode.GetError, () => this.store.get(scope, key));
  }

  /** Resolves the previous value itself (not wrapped), or undefined (§4.4 quirk). */
  async delete(scope: string, key: string, traceparent?: string): Promise<unknown | undefined> {
    const old = await storeCall(ErrorCode.DeleteError, () => this.store.delete(scope, key));
    // deleting a missing key succeeds but changes nothing, so nothing fires
    if (old !== undefined) this.emit(stateEvent(scope, key, old, undefined), traceparent);
    return old;
  }

  async update(scope: string, key: string, ops: UpdateOp[], traceparent?: string): Promise<UpdateOutcome> {
    const { outcome, written } = await this.applyUpdate(scope, key, ops);
    if (written) this.emit(stateEvent(scope, key, outcome.old_value, outcome.new_value), traceparent);
    return outcome;
  }

  /** The update without its event; `written` is false when no op applied (nothing was stored). */
  async applyUpdate(scope: string, key: string, ops: UpdateOp[]): Promise<{ outcome: UpdateOutcome; written: boolean }> {
    let last: AppliedUpdate | undefined;
    const result = await storeCall(ErrorCode.SetError, () =>
      this.store.update(scope, key, (current) => {
        last = applyUpdateOps(current, ops);
        // no op applied: leave the store (and triggers) alone; a missing key stays missing
        if (last.applied === 0) return KEEP_CURRENT;
        checkValueSize(last.value, this.maxValueBytes);
        return last.value;
      }),
    );
    const errors = last?.errors ?? [];
    const outcome: UpdateOutcome = { old_value: result.old ?? null, new_value: result.written ? result.value : (result.old ?? null) };
    if (errors.length) outcome.errors = errors;
    return { outcome, written: result.written };
  }

  list(scope: string, options: { offset?: number; limit?: number; prefix?: string }): Promise<KvEntry[]> {
    return storeCall(ErrorCode.ListError, () => this.store.list(scope, options));
  }

  count(scope: string, prefix?: string): Promise<number> {
    return storeCall(ErrorCode.ListError, () => this.store.count(scope, prefix));
  }

  groups(): Promise<string[]> {
    return storeCall(ErrorCode.ListGroupsError, () => this.store.scopes());
  }
}
