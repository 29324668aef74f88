import type { ClientEventName, ClientEvents, Logger } from './types.ts';

type Listener<E extends ClientEventName> = (payload: ClientEvents[E]) => void;

/** The client's events. A listener that throws is logged and skipped, never fatal. */
export class ClientEmitter {
  private readonly listeners = new Map<ClientEventName, Set<Listener<ClientEventName>>>();

  constructor(private readonly logger: Logger) {}

  on<E extends ClientEventName>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    const stored = listener as Listener<ClientEventName>;
    set.add(stored);
    return () => {
      set.delete(stored);
    };
  }

  emit<E extends ClientEventName>(event: E, payload: ClientEvents[E]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        (listener as Listener<E>)(payload);
      } catch (err) {
        this.logger.error(`'${event}' listener threw`, err);
      }
    }
  }
}
