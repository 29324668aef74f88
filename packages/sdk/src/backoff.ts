// spec: engine-protocol §2.9 — exponential backoff with jitter between reconnect attempts,
// the same defaults as iii-sdk so an eng worker and an iii worker behave alike on an outage.

export interface ReconnectOptions {
  /** Delay before the first retry. Default 1000. */
  initialDelayMs?: number;
  /** Upper bound of the delay before jitter. Default 30000. */
  maxDelayMs?: number;
  /** Growth factor per attempt. Default 2. */
  multiplier?: number;
  /** ± fraction of the delay added at random so many workers do not reconnect in lockstep. Default 0.3. */
  jitter?: number;
  /** Attempts before giving up: -1 retries forever (default), 0 never reconnects. */
  maxRetries?: number;
}

export type ReconnectPolicy = Required<ReconnectOptions>;

export const DEFAULT_RECONNECT: ReconnectPolicy = {
  initialDelayMs: 1000,
  maxDelayMs: 30_000,
  multiplier: 2,
  jitter: 0.3,
  maxRetries: -1,
};

export function reconnectPolicy(options: ReconnectOptions | undefined): ReconnectPolicy {
  const policy = { ...DEFAULT_RECONNECT };
  for (const [key, value] of Object.entries(options ?? {}) as [keyof ReconnectPolicy, number | undefined][]) {
    if (typeof value === 'number' && Number.isFinite(value)) policy[key] = value;
  }
  policy.initialDelayMs = Math.max(0, policy.initialDelayMs);
  policy.maxDelayMs = Math.max(policy.initialDelayMs, policy.maxDelayMs);
  policy.multiplier = Math.max(1, policy.multiplier);
  policy.jitter = Math.min(1, Math.max(0, policy.jitter));
  return policy;
}

/** True when attempt number `attempt` (0-based count of retries already made) may still run. */
export function mayRetry(policy: ReconnectPolicy, attempt: number): boolean {
  return policy.maxRetries < 0 || attempt < policy.maxRetries;
}

/** Delay before retry number `attempt` (0-based). `random` is injectable for tests. */
export function backoffDelay(policy: ReconnectPolicy, attempt: number, random: () => number = Math.random): number {
  const exponential = policy.initialDelayMs * policy.multiplier ** attempt;
  const capped = Math.min(exponential, policy.maxDelayMs);
  const jitter = capped * policy.jitter * (2 * random() - 1);
  return Math.max(0, Math.floor(capped + jitter));
}
