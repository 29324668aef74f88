// What a model's call would run. Some functions run others: `engine::functions::invoke` calls the
// function it names, an enqueue or a publish makes the engine call its targets later, a trigger
// registration makes it call one whenever the trigger fires. The gate judges every function in
// that chain, not only the one the model named (issue 24 item 1): a wrapper never carries a call
// past the gate, and a grant for a wrapper is a grant for that exact chain, never for what it wraps.

/** A function id a model may name: no glob characters, spaces or brackets (a grant is a literal id). */
const FUNCTION_ID = /^[A-Za-z0-9_][A-Za-z0-9_.:@/-]{0,255}$/;
/** How deep one call may nest wrappers before the gate stops looking (and refuses). */
const MAX_DEPTH = 8;

export function isValidFunctionId(id: unknown): id is string {
  return typeof id === 'string' && FUNCTION_ID.test(id);
}

/**
 * State scopes where the chat stack and the worktree worker keep their own records (approval
 * grants and held calls, sessions and transcripts, turn records). A model's write there could
 * grant itself approvals or rewrite another session: refused.
 */
export const RESERVED_STATE_SCOPES = ['approval-gate:', 'session-manager:', 'harness_', 'worktree'] as const;
const STATE_WRITES = new Set(['state::set', 'state::update', 'state::delete']);

export function isReservedScope(scope: string): boolean {
  return RESERVED_STATE_SCOPES.some((prefix) => scope === prefix || scope.startsWith(prefix));
}

/**
 * Functions whose effect the gate cannot see through, so a model never calls them: they re-run
 * calls nobody approved (dead letters), run tools of another surface, or rename workers.
 */
const OPAQUE: Record<string, string> = {
  'eng::queue::redrive': 'redriving a dead-letter queue re-runs calls the gate never saw',
  'eng::queue::redrive_message': 'redriving a dead-letter queue re-runs calls the gate never saw',
  'iii::queue::redrive': 'redriving a dead-letter queue re-runs calls the gate never saw',
  'iii::queue::redrive_message': 'redriving a dead-letter queue re-runs calls the gate never saw',
  'engine::workers::register': 'it changes what the engine says about a worker',
};
const OPAQUE_PREFIXES: Array<[string, string]> = [
  ['mcp::', "it is the MCP server's entry point, which runs tools of its own"],
  ['a2a::', 'it is the agent-to-agent entry point, which runs tools of its own'],
];

/** The calls a function makes with a payload, when the gate knows how (target ids and their payloads). */
type Unwrap = (payload: Record<string, unknown>, lookup: TargetLookup) => Promise<Inner[] | string>;
interface Inner {
  function_id: unknown;
  payload: unknown;
  /** What the chain key records about this hop (a topic, a trigger type). */
  label?: string;
}

export interface TargetLookup {
  /** Function ids bound by triggers of this type whose config names this topic. */
  subscribers(triggerType: string, topic: string): Promise<string[]>;
  /** The function a registered trigger calls, if the trigger exists. */
  triggerFunction(triggerId: string): Promise<string | undefined>;
}

const record = (value: unknown): Record<string, unknown> =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const direct =
  (idField: string, payloadField: string): Unwrap =>
  async (p) => [{ function_id: p[idField], payload: p[payloadField] }];

const fanOut =
  (triggerType: string): Unwrap =>
  async (p, lookup) => {
    const topic = typeof p.topic === 'string' && p.topic ? p.topic : typeof p.queue === 'string' ? p.queue : '';
    if (!topic) return 'it names no topic';
    const subscribers = await lookup.subscribers(triggerType, topic);
    return subscribers.map((function_id) => ({ function_id, payload: p.data, label: `topic ${topic}` }));
  };

const WRAPPERS: Record<string, Unwrap> = {
  'engine::functions::invoke': direct('function_id', 'payload'),
  'engine::queue::enqueue': direct('function_id', 'data'),
  'bridge.invoke': direct('function_id', 'data'),
  'bridge.invoke_async': direct('function_id', 'data'),
  publish: fanOut('subscribe'),
  'eng::durable::publish': fanOut('durable:subscriber'),
  'iii::durable::publish': fanOut('durable:subscriber'),
  // the trigger calls its function later with event data nobody knows yet
  'engine::register_trigger': async (p) => [
    { function_id: p.function_id, payload: UNKNOWN, label: `trigger ${typeof p.trigger_type === 'string' ? p.trigger_type : '?'}` },
  ],
  // a cron trigger fired by hand runs its function with the schedule's payload
  'eng::cron::trigger_now': async (p, lookup) => {
    if (typeof p.trigger_id !== 'string' || !p.trigger_id) return 'it names no trigger_id';
    const fn = await lookup.triggerFunction(p.trigger_id);
    return fn ? [{ function_id: fn, payload: { manual: true }, label: `cron ${p.trigger_id}` }] : 'no such trigger';
  },
  'engine::unregister_trigger': async (p, lookup) => {
    if (typeof p.id !== 'string' || !p.id) return 'it names no trigger id';
    const fn = await lookup.triggerFunction(p.id);
    // removing a binding of a protected function (the gate's own listeners) is judged as calling it
    return fn ? [{ function_id: fn, payload: UNKNOWN, label: `unbind ${p.id}` }] : [];
  },
};

/** A payload the gate cannot know (a trigger's future event): a wrapper given it cannot be seen through. */
const UNKNOWN = Symbol('unknown payload');

export interface CallChain {
  /** Every function the call would run: the one named first, then what it causes, without repeats. */
  functions: string[];
  /** The grant key of this exact chain: the function id, or `wrapper(target…)` for wrappers. */
  key: string;
  /** Set when the call cannot be allowed whatever the mode: an invalid id, a reserved scope, an opaque wrapper. */
  refusal?: string;
}

/** Resolve what a call would run. Never throws; an unreadable lookup refuses the call (fail closed). */
export async function resolveChain(functionId: unknown, payload: unknown, lookup: TargetLookup): Promise<CallChain> {
  const functions: string[] = [];
  let refusal: string | undefined;
  const refuse = (why: string) => {
    refusal ??= why;
  };

  const walk = async (id: unknown, input: unknown, depth: number): Promise<string> => {
    if (!isValidFunctionId(id)) {
      refuse(`${describeId(id)} is not a valid function id`);
      return '?';
    }
    if (!functions.includes(id)) functions.push(id);
    if (depth > MAX_DEPTH) {
      refuse(`${id}: calls nested more than ${MAX_DEPTH} deep`);
      return id;
    }
    const opaque = OPAQUE[id] ?? OPAQUE_PREFIXES.find(([prefix]) => id.startsWith(prefix))?.[1];
    if (opaque) {
      refuse(`${id} is not callable from a chat: ${opaque}`);
      return id;
    }
    if (STATE_WRITES.has(id)) {
      const scope = record(input).scope;
      if (input === UNKNOWN) refuse(`${id} bound to a trigger could write any scope, including the chat stack's own records`);
      else if (typeof scope === 'string' && isReservedScope(scope))
        refuse(`${id} on scope "${scope}" is refused: that scope holds the chat stack's own records`);
      return id;
    }
    const unwrap = WRAPPERS[id];
    if (!unwrap) return id;
    if (input === UNKNOWN) {
      refuse(`${id} bound to a trigger would call functions the gate cannot see`);
      return id;
    }
    let inner: Inner[] | string;
    try {
      inner = await unwrap(record(input), lookup);
    } catch (err) {
      inner = `looking up its targets failed (${(err as Error).message})`;
    }
    if (typeof inner === 'string') {
      refuse(`${id}: ${inner}`);
      return id;
    }
    const parts: string[] = [];
    for (const hop of inner) {
      const key = await walk(hop.function_id, hop.payload, depth + 1);
      parts.push(hop.label ? `${hop.label}: ${key}` : key);
    }
    return `${id}(${parts.join(', ')})`;
  };

  const key = await walk(functionId, payload, 0);
  return { functions, key, ...(refusal ? { refusal } : {}) };
}

function describeId(id: unknown): string {
  if (typeof id !== 'string') return `a function id of type ${id === null ? 'null' : typeof id}`;
  const shown = id.length > 80 ? `${id.slice(0, 80)}…` : id;
  return JSON.stringify(shown);
}

/** The lookup over the engine's own introspection functions. */
export function engineLookup(call: (functionId: string, payload: unknown) => Promise<unknown>): TargetLookup {
  return {
    async subscribers(triggerType, topic) {
      const listed = (await call('engine::registered-triggers::list', { trigger_type: triggerType, include_internal: true })) as {
        registered_triggers?: Array<{ function_id: string; config?: Record<string, unknown> }>;
      } | null;
      return [
        ...new Set(
          (listed?.registered_triggers ?? [])
            .filter((t) => t.config?.topic === topic || t.config?.queue === topic)
            .map((t) => t.function_id),
        ),
      ];
    },
    async triggerFunction(triggerId) {
      try {
        const info = (await call('engine::registered-triggers::info', { id: triggerId })) as { function_id?: string } | null;
        return info?.function_id;
      } catch (err) {
        if ((err as { code?: string }).code === 'NOT_FOUND') return undefined;
        throw err;
      }
    },
  };
}
