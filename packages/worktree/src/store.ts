import type { EngClient } from '@eng/sdk';
import { W, worktreeError } from './errors.ts';
import type { LandJob, WorktreeRecord } from './types.ts';

const RECORDS = 'worktree';
const JOBS = 'worktree-land';
const TIMEOUT_MS = 10_000;

/**
 * The worker's durable state in the engine's state store (`state::*`): one entry per managed
 * worktree and one per land job. Everything is loaded at start and kept in memory (one worker
 * instance per engine, as the reference says: state has no compare-and-swap), and every change
 * is written through before the function that made it answers — so a restarted worker, or a
 * worker on a restarted engine with file-based state, picks up where it was.
 */
export class Store {
  private readonly records = new Map<string, WorktreeRecord>();
  private readonly jobs = new Map<string, LandJob>();

  constructor(private readonly client: EngClient) {}

  async load(): Promise<void> {
    for (const { key, value } of await this.list<WorktreeRecord>(RECORDS)) {
      if (value && typeof value === 'object' && value.worktree_id === key) this.records.set(key, value);
    }
    for (const { key, value } of await this.list<LandJob>(JOBS)) {
      if (value && typeof value === 'object' && value.job_id === key) this.jobs.set(key, value);
    }
  }

  /** Records oldest first (ties by id, so the order is stable). */
  all(): WorktreeRecord[] {
    return [...this.records.values()].sort((a, b) => a.created_at - b.created_at || a.worktree_id.localeCompare(b.worktree_id));
  }

  get(id: string): WorktreeRecord | undefined {
    return this.records.get(id);
  }

  require(id: string): WorktreeRecord {
    const record = this.records.get(id);
    if (!record) throw worktreeError(W.NotFound, `no managed worktree ${JSON.stringify(id)}`);
    return record;
  }

  countOfRepo(repoKey: string): number {
    let n = 0;
    for (const r of this.records.values()) if (r.repo_key === repoKey) n++;
    return n;
  }

  async put(record: WorktreeRecord): Promise<WorktreeRecord> {
    await this.write(RECORDS, record.worktree_id, record);
    this.records.set(record.worktree_id, record);
    return record;
  }

  async update(id: string, change: Partial<WorktreeRecord>): Promise<WorktreeRecord> {
    const next = { ...this.require(id), ...change, updated_at: Date.now() };
    for (const [k, v] of Object.entries(change)) if (v === undefined) delete (next as Record<string, unknown>)[k];
    return this.put(next);
  }

  async delete(id: string): Promise<void> {
    await this.remove(RECORDS, id);
    this.records.delete(id);
  }

  job(id: string): LandJob | undefined {
    return this.jobs.get(id);
  }

  /** Jobs not finished yet, in queue order. */
  pendingJobs(repoKey?: string): LandJob[] {
    return [...this.jobs.values()]
      .filter((j) => (j.state === 'queued' || j.state === 'running') && (repoKey === undefined || j.repo_key === repoKey))
      .sort((a, b) => a.seq - b.seq);
  }

  nextSeq(): number {
    let max = 0;
    for (const j of this.jobs.values()) max = Math.max(max, j.seq);
    return Math.max(max + 1, Date.now() * 1000);
  }

  async putJob(job: LandJob): Promise<LandJob> {
    await this.write(JOBS, job.job_id, job);
    this.jobs.set(job.job_id, job);
    return job;
  }

  async updateJob(id: string, change: Partial<LandJob>): Promise<LandJob> {
    const current = this.jobs.get(id);
    if (!current) throw worktreeError(W.NotFound, `no land job ${id}`);
    return this.putJob({ ...current, ...change, updated_at: Date.now() });
  }

  /** Forget finished jobs older than `ageMs` (their outcome stays on the worktree record). */
  async dropFinishedJobs(ageMs: number): Promise<void> {
    const cutoff = Date.now() - ageMs;
    for (const job of [...this.jobs.values()]) {
      if ((job.state === 'landed' || job.state === 'blocked') && job.updated_at < cutoff) {
        await this.remove(JOBS, job.job_id);
        this.jobs.delete(job.job_id);
      }
    }
  }

  /**
   * Write everything held in memory again: after a reconnect the engine may be a restarted one
   * whose in-memory state started empty (file-based state just gets the same values).
   */
  async persistAll(): Promise<void> {
    for (const record of this.records.values()) await this.write(RECORDS, record.worktree_id, record);
    for (const job of this.jobs.values()) await this.write(JOBS, job.job_id, job);
  }

  private async write(scope: string, key: string, value: unknown): Promise<void> {
    try {
      await this.client.call('state::set', { scope, key, value }, { timeoutMs: TIMEOUT_MS });
    } catch (err) {
      throw worktreeError(W.StateUnavailable, `storing ${scope}/${key} failed: ${(err as Error).message}`);
    }
  }

  private async remove(scope: string, key: string): Promise<void> {
    try {
      await this.client.call('state::delete', { scope, key }, { timeoutMs: TIMEOUT_MS });
    } catch (err) {
      throw worktreeError(W.StateUnavailable, `deleting ${scope}/${key} failed: ${(err as Error).message}`);
    }
  }

  private async list<T>(scope: string): Promise<Array<{ key: string; value: T }>> {
    const out: Array<{ key: string; value: T }> = [];
    const limit = 1000;
    for (let offset = 0; ; offset += limit) {
      const page = await this.client.call<{ items: Array<{ key: string; value: T }> }>(
        'state::list',
        { scope, with_keys: true, offset, limit },
        { timeoutMs: TIMEOUT_MS },
      );
      out.push(...(page?.items ?? []));
      if (!page || page.items.length < limit) return out;
    }
  }
}
