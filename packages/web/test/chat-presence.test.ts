import { describe, expect, it } from 'vitest';
import { DROP_GRACE_MS, INITIAL_PRESENCE, nextDropAt, nextPresence, type PresenceMemory, RECONNECT_GRACE_MS } from '../src/api/presence.ts';

/**
 * Issue 25 item 1: an outage is not an uninstall. The chat and worktree surfaces (nav entries,
 * pages) stay while the engine is unreachable, including after an engine shutdown that stopped
 * the chat stack just before it closed its bus, and go only once a connected engine has been
 * without their worker for a while.
 */
const both = { chat: true, worktrees: true };
const none = { chat: false, worktrees: false };

function run(steps: Array<[at: number, listed: typeof both | undefined, online: boolean]>): PresenceMemory {
  return steps.reduce((m, [at, listed, online]) => nextPresence(m, { listed, online }, at), INITIAL_PRESENCE);
}

describe('presence', () => {
  it('is unknown until a list arrives, then says what the list says', () => {
    expect(run([[0, undefined, false]]).known).toBe(false);
    expect(run([[0, undefined, true]]).known).toBe(false);
    const first = run([[0, { chat: true, worktrees: false }, true]]);
    expect(first).toMatchObject({ known: true, shown: { chat: true, worktrees: false } });
    // a first list without the chat stack: absent at once (the install notice), no grace
    expect(run([[0, none, true]]).shown).toEqual(none);
  });

  it('keeps what was shown while the engine is unreachable, however long', () => {
    const m = run([
      [0, both, true],
      [1000, both, false],
      [1000 + 10 * 60_000, none, false],
    ]);
    expect(m.shown).toEqual(both);
  });

  it('a shutdown: the workers leave moments before the bus closes, and nothing goes', () => {
    const m = run([
      [0, both, true],
      [100, none, true], // the supervisor stopped the chat stack: the list has none of it
      [900, none, false], // then the engine closed
      [60_000, none, false],
    ]);
    expect(m.shown).toEqual(both);
    expect(m.missingSince).toEqual({});
  });

  it('after a reconnection the workers get RECONNECT_GRACE_MS to come back', () => {
    const back = 10_000;
    const steps: Array<[number, typeof both | undefined, boolean]> = [
      [0, both, true],
      [1000, none, false],
      [back, none, true],
    ];
    expect(run(steps).shown).toEqual(both);
    expect(run([...steps, [back + RECONNECT_GRACE_MS - 1, none, true]]).shown).toEqual(both);
    // they came back in time: present, nothing pending
    const returned = run([...steps, [back + 20_000, both, true]]);
    expect(returned.shown).toEqual(both);
    expect(nextDropAt(returned)).toBeUndefined();
    // they did not: gone once the grace is over
    expect(run([...steps, [back + RECONNECT_GRACE_MS, none, true]]).shown).toEqual(none);
  });

  it('with the engine connected, a worker that leaves and stays away goes after DROP_GRACE_MS', () => {
    const steps: Array<[number, typeof both | undefined, boolean]> = [
      [0, both, true],
      [100_000, { chat: true, worktrees: false }, true],
    ];
    const pending = run(steps);
    expect(pending.shown).toEqual(both);
    expect(nextDropAt(pending)).toBe(100_000 + DROP_GRACE_MS);
    expect(run([...steps, [100_000 + DROP_GRACE_MS - 1, { chat: true, worktrees: false }, true]]).shown.worktrees).toBe(true);
    expect(run([...steps, [100_000 + DROP_GRACE_MS, { chat: true, worktrees: false }, true]]).shown).toEqual({
      chat: true,
      worktrees: false,
    });
    // a worker that comes (back) is shown at once
    expect(run([...steps, [100_000 + DROP_GRACE_MS, none, true], [200_000, both, true]]).shown).toEqual(both);
  });
});
