import type { EngineServices } from '../../core/module.ts';

/**
 * Credential values this engine knows, so telemetry can scrub them out of any string before a span
 * or log record is kept (issue 24 item 12: redaction by field name misses a key quoted inside a
 * payload). An in-engine service, the one thing the modules share about secrets: the
 * configuration module publishes the secret fields of its entries (source `configuration:<id>`),
 * observability the engine's own credential-named environment variables (source `environment`),
 * and observability reads the union.
 */
export const SECRET_REGISTRY_SERVICE = 'engine.secretValues';

/** Shorter values are not scrubbed: replacing every `admin` or `1234` would garble the telemetry, not protect it. */
export const MIN_SECRET_LENGTH = 8;

export class SecretRegistry {
  private readonly sources = new Map<string, readonly string[]>();
  private readonly listeners = new Set<() => void>();

  /** Replace what `source` holds (an empty list removes it); listeners hear of a change only. */
  set(source: string, values: Iterable<string>): void {
    const kept = [...new Set([...values].filter((v) => typeof v === 'string' && v.length >= MIN_SECRET_LENGTH))].sort();
    const previous = this.sources.get(source) ?? [];
    if (kept.length === previous.length && kept.every((v, i) => v === previous[i])) return;
    if (kept.length) this.sources.set(source, kept);
    else this.sources.delete(source);
    for (const listener of this.listeners) listener();
  }

  /** Every value of every source, once each. */
  values(): string[] {
    const all = new Set<string>();
    for (const list of this.sources.values()) for (const value of list) all.add(value);
    return [...all];
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}

/** The engine's registry: whichever module starts first creates it, so start order does not matter. */
export function secretRegistry(services: EngineServices): SecretRegistry {
  let registry = services.get<SecretRegistry>(SECRET_REGISTRY_SERVICE);
  if (!registry) {
    registry = new SecretRegistry();
    services.set(SECRET_REGISTRY_SERVICE, registry);
  }
  return registry;
}

// OPENAI_API_KEY, GITHUB_TOKEN, JWT_SECRET, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, PGPASSWORD, … but
// not MAX_TOKENS or TOKENIZERS_PARALLELISM (TOKEN only as a whole word of the name)
const CREDENTIAL_NAME = /SECRET|PASSWORD|PASSWD|PASSPHRASE|APIKEY|(?:^|_)(?:TOKEN|CREDENTIALS?)(?:_|$)|_KEY$/i;

/**
 * Values of the credential-named variables of `env` (the engine's own environment, which the
 * workers it supervises inherit: a provider key in OPENAI_API_KEY reaches their payloads).
 */
export function credentialEnvValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !CREDENTIAL_NAME.test(name)) continue;
    // the worker that reads it may trim it (the model router does)
    out.push(value);
    if (value.trim() !== value) out.push(value.trim());
  }
  return out;
}
