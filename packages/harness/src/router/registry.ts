import type { ProviderInfo } from './types.ts';

// spec: console-worker §2.4 — providers declare themselves (`router::provider::register`) and are
// `available` while their worker is connected; `configured` when a credential is reachable. Only
// the connection decides availability (a provider declares again on each new connection): a
// failed generation never does.

export interface ProviderRecord {
  id: string;
  display_name: string;
  credential_env_var?: string;
  base_url_env_var?: string;
  supports_model_listing: boolean;
  api_url_is_enough: boolean;
  /** The provider's own process has the credential in its environment. */
  env_credentials: boolean;
  worker_id?: string;
  available: boolean;
}

export const PROVIDER_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export class ProviderRegistry {
  private readonly records = new Map<string, ProviderRecord>();

  /** Add or refresh a declaration; returns what changed for `router::provider::changed`. */
  declare(record: ProviderRecord): 'register' | 'available' | 'unchanged' {
    const before = this.records.get(record.id);
    this.records.set(record.id, record);
    if (!before) return 'register';
    if (!before.available) return 'available';
    return JSON.stringify(before) === JSON.stringify(record) ? 'unchanged' : 'register';
  }

  get(id: string): ProviderRecord | undefined {
    return this.records.get(id);
  }

  all(): ProviderRecord[] {
    return [...this.records.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  isAvailable(id: string): boolean {
    return this.records.get(id)?.available === true;
  }

  /** The providers whose worker just left; they stay listed, unavailable. */
  workerGone(workerId: string): ProviderRecord[] {
    const gone: ProviderRecord[] = [];
    for (const record of this.records.values()) {
      if (record.worker_id === workerId && record.available) {
        record.available = false;
        gone.push(record);
      }
    }
    return gone;
  }

  info(id: string, configured: boolean): ProviderInfo | undefined {
    const record = this.records.get(id);
    if (!record) return undefined;
    const info: ProviderInfo = {
      id: record.id,
      display_name: record.display_name,
      configured,
      available: record.available,
      supports_model_listing: record.supports_model_listing,
    };
    if (record.credential_env_var) info.credential_env_var = record.credential_env_var;
    return info;
  }
}
