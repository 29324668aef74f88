import type { EngClient } from '@eng/sdk';
import { StateKv } from '../shared/kv.ts';
import type { TurnRecord } from './types.ts';

// The harness's durable memory in the engine's state store: the latest turn of each session
// (written at every transition, never per token) and the idempotency keys it has accepted.

const TURNS = 'harness_turns';
const IDEMPOTENCY = 'harness_idempotency';

export class TurnStore {
  private readonly kv: StateKv;

  constructor(client: EngClient) {
    this.kv = new StateKv(client, { timeoutMs: 15_000 });
  }

  save(record: TurnRecord): Promise<void> {
    record.updated_at = Date.now();
    return this.kv.set(TURNS, record.session_id, structuredClone(record));
  }

  latest(sessionId: string): Promise<TurnRecord | undefined> {
    return this.kv.get<TurnRecord>(TURNS, sessionId);
  }

  /** Turns a previous harness left running or waiting (it was killed). */
  async unfinished(): Promise<TurnRecord[]> {
    const all = await this.kv.list<TurnRecord>(TURNS);
    return all.map((e) => e.value).filter((r) => r && (r.status === 'running' || r.status === 'awaiting_functions'));
  }

  /** The turn an idempotency key was accepted into, if any. */
  async acceptedTurn(sessionId: string, entryId: string): Promise<string | undefined> {
    const hit = await this.kv.get<{ turn_id: string }>(IDEMPOTENCY, `${sessionId}/${entryId}`);
    return hit?.turn_id;
  }

  remember(sessionId: string, entryId: string, turnId: string): Promise<void> {
    return this.kv.set(IDEMPOTENCY, `${sessionId}/${entryId}`, { turn_id: turnId, at: Date.now() });
  }

  flush(): Promise<void> {
    return this.kv.flush();
  }
}
