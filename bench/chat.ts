/**
 * bench/chat — the chat harness's own cost. The stack runs as in production (engine, session store,
 * router, OpenAI-compatible provider, harness: each its own process); the model is the fake
 * OpenAI server in this process, so every timestamp below is on one clock.
 *
 * 1. Overhead per turn: harness::send → the first session::message-updated carrying text (what a
 *    UI renders first), minus the fake's time to first byte. Baseline in the same run: the official
 *    `openai` client in this process streaming from the same fake (its own time to the first chunk).
 *    Budget: ≤ 20 ms added at p50.
 * 2. Streaming throughput: tokens/s arriving as session updates vs tokens/s the fake emits, for a
 *    long answer streamed at a steady pace. Budget: ≥ 90% delivered.
 *
 *   node --import tsx bench/chat.ts [--turns 40] [--tokens 3000]
 */
import type { EngClient } from '@eng/sdk';
import OpenAI from 'openai';
import { type ChatStack, startChatStack } from '../packages/harness/test/chat-loop-helpers.ts';
import { fmt, median, percentile, table } from './lib.ts';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set((process.argv[i] as string).replace(/^--/, ''), process.argv[i + 1] ?? '');
const TURNS = Number(args.get('turns') ?? 40);
const WARMUP = 5;
const TOKENS = Number(args.get('tokens') ?? 3000);
const OVERHEAD_BUDGET_MS = 20;
const DELIVERED_BUDGET = 0.9;

/** First text update and full-text update per assistant entry, as a UI bound to the session triggers sees them. */
function watchUpdates(client: EngClient) {
  const firstText = new Map<string, number>();
  const fullText = new Map<string, number>();
  const expected = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  client.registerFunction('bench::on-update', async (event: any) => {
    const at = performance.now();
    const text = (event.message?.content ?? []).map((b: any) => (b.type === 'text' ? b.text : '')).join('');
    if (!text) return {};
    const id = event.entry_id as string;
    if (!firstText.has(id)) firstText.set(id, at);
    const want = expected.get(id);
    if (want !== undefined && text.length >= want && !fullText.has(id)) fullText.set(id, at);
    if (want === undefined || fullText.has(id)) waiters.get(id)?.();
    return {};
  });
  client.registerTrigger({ type: 'session::message-updated', function_id: 'bench::on-update', config: {} });
  return {
    firstText,
    fullText,
    /** The first step's entry of a turn: `e_<turn_id>_1`. */
    entryOf: (turnId: string) => `e_${turnId}_1`,
    /** Resolves at the entry's first text update, or once `length` characters of text arrived. */
    wait(entryId: string, length?: number): Promise<void> {
      if (length !== undefined) expected.set(entryId, length);
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => reject(new Error(`no update for ${entryId} within 30 s`)), 30_000);
        waiters.set(entryId, done);
        if (firstText.has(entryId) && (length === undefined || fullText.has(entryId))) done();
      });
    },
  };
}

async function directTtfb(stack: ChatStack): Promise<number[]> {
  const openai = new OpenAI({ apiKey: 'sk-bench', baseURL: stack.fake.baseUrl, maxRetries: 0 });
  const out: number[] = [];
  for (let i = 0; i < TURNS + WARMUP; i++) {
    stack.fake.turn({ text: 'Hello from the fake model.' });
    const started = performance.now();
    const stream = await openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let first = 0;
    for await (const chunk of stream) if (!first && chunk.choices[0]?.delta?.content) first = performance.now();
    if (i >= WARMUP) out.push(first - started);
  }
  return out;
}

async function overhead(stack: ChatStack, updates: ReturnType<typeof watchUpdates>) {
  const total: number[] = [];
  const ttfb: number[] = [];
  // turns of ongoing conversations (each session created ahead, as the UI does when a chat opens)
  const SESSIONS = 5;
  for (let s = 0; s < SESSIONS; s++) await stack.client.call('session::ensure', { session_id: `bench_o_${s}` });
  for (let i = 0; i < TURNS + WARMUP; i++) {
    const sid = `bench_o_${i % SESSIONS}`;
    stack.fake.turn({ text: 'Hello from the fake model.' });
    const timingsBefore = stack.fake.streamTimings.length;
    const started = performance.now();
    const answer = await stack.client.call<{ turn_id: string }>('harness::send', {
      session_id: sid,
      model: 'gpt-4o',
      message: 'hi',
      options: { mode: 'ask' },
    });
    const entry = updates.entryOf(answer.turn_id);
    await updates.wait(entry);
    const server = await waitTiming(stack, timingsBefore);
    await waitIdle(stack, sid);
    if (i < WARMUP) continue;
    total.push((updates.firstText.get(entry) as number) - started);
    ttfb.push(server.firstByte - server.arrived);
  }
  return { total, ttfb };
}

async function waitTiming(stack: ChatStack, index: number) {
  for (let i = 0; i < 200; i++) {
    const t = stack.fake.streamTimings[index];
    if (t) return t;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('the fake recorded no stream');
}

async function waitIdle(stack: ChatStack, sid: string) {
  for (let i = 0; i < 400; i++) {
    const status = await stack.client.call<any>('harness::status', { session_id: sid });
    if (status && status.status !== 'running') return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function throughput(stack: ChatStack, updates: ReturnType<typeof watchUpdates>, delayMs: number | undefined, label: string) {
  const words = Array.from({ length: TOKENS }, (_, i) => `w${i % 1000} `);
  const text = words.join('');
  const rows: Array<{ emitted: number; delivered: number }> = [];
  for (let round = 0; round < 3; round++) {
    const sid = `bench_t_${label}_${round}`;
    stack.fake.turn({ text, delayMs });
    const before = stack.fake.streamTimings.length;
    const answer = await stack.client.call<{ turn_id: string }>('harness::send', {
      session_id: sid,
      session: {},
      model: 'gpt-4o',
      message: 'talk',
      options: { mode: 'ask' },
    });
    const entry = updates.entryOf(answer.turn_id);
    await updates.wait(entry, text.length);
    const server = await waitTiming(stack, before);
    const emittedSeconds = (server.end - server.firstByte) / 1000;
    const deliveredSeconds = ((updates.fullText.get(entry) as number) - (updates.firstText.get(entry) as number)) / 1000;
    rows.push({ emitted: TOKENS / emittedSeconds, delivered: TOKENS / Math.max(deliveredSeconds, emittedSeconds) });
    await waitIdle(stack, sid);
  }
  const emitted = median(rows.map((r) => r.emitted));
  const delivered = median(rows.map((r) => r.delivered));
  return { label, emitted, delivered, ratio: delivered / emitted };
}

const stack = await startChatStack({ roles: ['session', 'router', 'provider-openai', 'harness'] });
try {
  const updates = watchUpdates(stack.client);
  await stack.client.call('engine::functions::list', {});
  const direct = (await directTtfb(stack)).sort((a, b) => a - b);
  const { total, ttfb } = await overhead(stack, updates);
  const added = total.map((t, i) => t - (ttfb[i] as number)).sort((a, b) => a - b);
  total.sort((a, b) => a - b);
  console.log(`chat turn overhead (${TURNS} turns after ${WARMUP} warm-up; fake answers at once)\n`);
  console.log(
    table([
      {
        path: 'openai client → fake (baseline: first chunk)',
        p50: fmt(percentile(direct, 50), 2),
        p90: fmt(percentile(direct, 90), 2),
        p99: fmt(percentile(direct, 99), 2),
      },
      {
        path: 'harness::send → first text update',
        p50: fmt(percentile(total, 50), 2),
        p90: fmt(percentile(total, 90), 2),
        p99: fmt(percentile(total, 99), 2),
      },
      { path: 'fake time to first byte (server)', p50: fmt(median(ttfb), 3), p90: '', p99: '' },
      {
        path: 'added by the chat stack',
        p50: fmt(percentile(added, 50), 2),
        p90: fmt(percentile(added, 90), 2),
        p99: fmt(percentile(added, 99), 2),
      },
    ]),
  );
  const p50 = percentile(added, 50);
  console.log(`\n(ms) latency ratio (harness path/direct client, p50): ${fmt(percentile(total, 50) / percentile(direct, 50), 2)}×`);
  console.log(`overhead p50: ${fmt(p50, 2)} ms   budget ≤ ${OVERHEAD_BUDGET_MS} ms ${p50 <= OVERHEAD_BUDGET_MS ? 'OK' : 'OVER'}`);

  const steady = await throughput(stack, updates, 1, 'steady');
  const burst = await throughput(stack, updates, undefined, 'burst');
  console.log(`\nstreaming throughput (${TOKENS} tokens, medians of 3)\n`);
  console.log(
    table(
      [steady, burst].map((r) => ({
        stream: r.label === 'steady' ? 'steady (1 ms between chunks)' : 'burst (as fast as the fake writes)',
        'emitted tok/s': fmt(r.emitted, 0),
        'delivered tok/s': fmt(r.delivered, 0),
        delivered: `${fmt(r.ratio * 100, 1)}%`,
      })),
    ),
  );
  console.log(
    `\ndelivered/emitted (steady): ${fmt(steady.ratio * 100, 1)}%   budget ≥ ${DELIVERED_BUDGET * 100}% ${steady.ratio >= DELIVERED_BUDGET ? 'OK' : 'UNDER'}`,
  );
} finally {
  await stack.stop();
}
process.exit(0);
