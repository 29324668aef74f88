// A module of its own, with no imports: modern.ts, mrtr.ts and tasks.ts import one another, and
// NEVER_CANCELLED is read while they load.

/**
 * One leg of a modern request: cancelled when the client cancels it (closes its stream, or sends
 * notifications/cancelled on stdio). Not an AbortSignal: on Node 20 each one costs ~5 µs to make
 * and every request has a leg, while almost none is ever cancelled.
 */
export class Leg {
  cancelled = false;
  private listeners?: Array<() => void>;

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (!listeners) return;
    // every listener hears it, even after one throws; the first error is then thrown on
    let failure: { error: unknown } | undefined;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  /** Runs `listener` on cancellation (at once when cancelled already); returns its removal. */
  onCancel(listener: () => void): () => void {
    if (this.cancelled) {
      listener();
      return noop;
    }
    this.listeners ??= [];
    this.listeners.push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at !== -1) this.listeners?.splice(at, 1);
    };
  }
}

const noop = (): void => undefined;

/** A leg nobody can cancel (a task's, an answered request's): keeps no listeners. */
class UncancellableLeg extends Leg {
  override cancel(): void {}
  override onCancel(): () => void {
    return noop;
  }
}
export const NEVER_CANCELLED: Leg = new UncancellableLeg();
