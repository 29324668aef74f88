import type { EngClient } from '@eng/sdk';
import type { ProviderRecord } from './registry.ts';
import {
  changedSlices,
  composeEntrySchema,
  defaultSliceSchema,
  ENTRY_ID,
  parseSettings,
  type RouterSettings,
  sliceFingerprints,
} from './settings.ts';

// spec: console-worker §2.5 — the router registers the `llm-router` configuration entry (schema
// composed from the providers, `api_key` write-only), reads it, and listens on the `configuration`
// trigger type: a changed provider slice refreshes that provider's catalogue within a second.

const ON_CHANGE = 'router::on-config-change';
const REFRESH_DEBOUNCE_MS = 300;
const RETRY_MS = 2000;

export interface Credentials {
  api_key?: string;
  api_url?: string;
  source: 'config' | 'env' | 'none';
}

export class RouterConfigEntry {
  settings: RouterSettings = parseSettings(undefined);
  private fingerprints = new Map<string, string>();
  private pendingRefresh = new Set<string>();
  private refreshTimer?: ReturnType<typeof setTimeout>;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private registered = false;
  private schemaSlices: Record<string, Record<string, unknown>> = {};
  private stopped = false;

  constructor(
    private readonly client: EngClient,
    private readonly refreshProviders: (ids: string[]) => void,
  ) {}

  start(): void {
    this.client.registerFunction(ON_CHANGE, (event) => this.onChange(event), {
      description: 'Apply a change of the llm-router configuration entry',
      metadata: { internal: true },
    });
    this.client.registerTrigger({ type: 'configuration', function_id: ON_CHANGE, config: { configuration_id: ENTRY_ID } });
    void this.sync();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.refreshTimer);
    clearTimeout(this.retryTimer);
  }

  /** A provider declared itself: its slice joins the entry's schema. */
  addProvider(record: ProviderRecord): void {
    const slice = defaultSliceSchema(record.display_name, record.credential_env_var);
    if (JSON.stringify(this.schemaSlices[record.id]) === JSON.stringify(slice)) return;
    this.schemaSlices[record.id] = slice;
    this.registered = false;
    void this.sync();
  }

  /** spec §2.5 `router::provider::resolve`: config > the router's environment > none. */
  resolve(record: ProviderRecord | undefined, providerId: string): Credentials {
    const slice = this.settings.providers[providerId];
    if (slice?.api_key || slice?.api_url) {
      const out: Credentials = { source: 'config' };
      if (slice.api_key) out.api_key = slice.api_key;
      else if (record?.credential_env_var && process.env[record.credential_env_var]?.trim())
        out.api_key = process.env[record.credential_env_var]?.trim();
      if (slice.api_url) out.api_url = slice.api_url;
      else if (record?.base_url_env_var && process.env[record.base_url_env_var]?.trim())
        out.api_url = process.env[record.base_url_env_var]?.trim();
      if (out.api_key || record?.api_url_is_enough) return out;
    }
    const key = record?.credential_env_var ? process.env[record.credential_env_var]?.trim() : undefined;
    const url = record?.base_url_env_var ? process.env[record.base_url_env_var]?.trim() : undefined;
    if (key || (url && record?.api_url_is_enough)) {
      const out: Credentials = { source: 'env' };
      if (key) out.api_key = key;
      if (url) out.api_url = url;
      return out;
    }
    return url ? { source: 'none', api_url: url } : { source: 'none' };
  }

  isConfigured(record: ProviderRecord): boolean {
    return record.env_credentials || this.resolve(record, record.id).source !== 'none';
  }

  /** Register the entry (once per schema change) and read its value; retried until the configuration module answers. */
  private async sync(): Promise<void> {
    clearTimeout(this.retryTimer);
    if (this.stopped) return;
    try {
      if (!this.registered) {
        await this.client.call(
          'configuration::register',
          {
            id: ENTRY_ID,
            name: 'LLM Router',
            description: 'Provider credentials (api_key is a write-only secret), API URLs, routing heuristics and stream budgets',
            schema: composeEntrySchema(this.schemaSlices),
            defaults: { providers: {} },
          },
          { timeoutMs: 5000 },
        );
        this.registered = true;
      }
      // `reveal`: the router is the one worker that needs the secret fields back
      const entry = await this.client.call<{ value?: unknown } | null>('configuration::reveal', { id: ENTRY_ID }, { timeoutMs: 5000 });
      this.apply(entry?.value);
    } catch (err) {
      const code = (err as { code?: string }).code;
      // NOT_FOUND: registered but nothing stored yet — nothing to apply
      if (code === 'NOT_FOUND' && this.registered) return;
      this.retryTimer = setTimeout(() => void this.sync(), RETRY_MS);
      this.retryTimer.unref?.();
    }
  }

  private async onChange(event: unknown): Promise<{ ok: true }> {
    const e = (event ?? {}) as { id?: unknown; configuration_id?: unknown };
    const id = e.configuration_id ?? e.id;
    // the event may carry the value with secrets masked: read it back whole
    if (id === undefined || id === ENTRY_ID) await this.sync();
    return { ok: true };
  }

  private apply(value: unknown): void {
    this.settings = parseSettings(value);
    const next = sliceFingerprints(this.settings);
    const changed = changedSlices(this.fingerprints, next);
    this.fingerprints = next;
    if (changed.length === 0) return;
    for (const id of changed) this.pendingRefresh.add(id);
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => {
      const ids = [...this.pendingRefresh];
      this.pendingRefresh.clear();
      this.refreshProviders(ids);
    }, REFRESH_DEBOUNCE_MS);
  }
}
