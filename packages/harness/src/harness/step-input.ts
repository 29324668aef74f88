import type { EngClient, WorkerSpan } from '@eng/sdk';
import type { AgentMessage, ChatMessage, Model, ToolSpec } from '../router/types.ts';
import { compactSession, wouldOverflow } from './compaction.ts';
import { agentTriggerTool, FunctionPolicy, gateDenials } from './policy.ts';
import { functionCatalogue, systemPrompt, systemPromptOverride } from './prompts.ts';
import { contextOf, readTranscript, toChatMessages } from './transcript.ts';
import type { TurnRecord } from './types.ts';

// What one generation step sends: the conversation (compacted first when it would not fit the
// model's window), the system prompt, the tool, and the function policy its calls are held to.
// Everything is fetched at once; what cannot change within a turn is fetched once per turn.

export interface StepInput {
  messages: ChatMessage[];
  system: string;
  tools?: ToolSpec[];
  policy: FunctionPolicy;
}

export class StepInputs {
  private model?: Promise<Model | undefined>;
  private override?: Promise<string | undefined>;

  constructor(
    private readonly client: EngClient,
    private readonly record: TurnRecord,
    private readonly span: WorkerSpan,
  ) {}

  /**
   * `opening`: the user message the turn answers, when its write may not have landed yet (the
   * first step's reads overlap it). `alongside`: writes the caller wants done in the same wait.
   */
  async prepare(opening: { entry_id: string; message: AgentMessage } | undefined, alongside: Promise<unknown>): Promise<StepInput> {
    const r = this.record;
    const mode = r.options.mode ?? 'agent';
    this.override ??= systemPromptOverride(this.client, r.provider);
    this.model ??= this.client
      .call<Model | null>('router::models::get', { model: r.model, provider: r.provider }, { timeoutMs: 5000 })
      .then((m) => m ?? undefined)
      .catch(() => undefined);
    const functions = r.options.functions ?? {};
    const policy = gateDenials(this.client).then(
      (deny) =>
        new FunctionPolicy({
          allow: functions.allow,
          deny: [...(functions.deny ?? []), ...deny],
          // no tool is offered in ask mode; a model that calls one anyway is refused, not obeyed
          ...(mode === 'ask' ? { closed: 'this chat is in ask mode: it calls no functions' } : {}),
        }),
    );
    const [transcript, model, catalogue, override, allowed] = await Promise.all([
      readTranscript(this.client, r.session_id),
      this.model,
      mode === 'ask' ? Promise.resolve('') : functionCatalogue(this.client, policy),
      this.override,
      policy,
      alongside,
    ]);
    const system = systemPrompt(override, r.options, catalogue);
    if (opening && !transcript.some((item) => item.entry_id === opening.entry_id)) {
      transcript.push({ entry_id: opening.entry_id, message: opening.message });
    }
    let context = contextOf(transcript);
    if (model && wouldOverflow(model, context, system)) {
      const compacted = await compactSession(this.client, { sessionId: r.session_id, turnId: r.turn_id, model, span: this.span }, context);
      if (compacted.compacted) context = compacted.context;
    }
    const messages = toChatMessages(context);
    return {
      // a conversation that held images goes on with a model without vision: they are named, not sent
      messages: model && !model.supports_vision ? withoutImages(messages, `${r.provider}::${r.model}`) : messages,
      system,
      tools: mode === 'ask' ? undefined : [agentTriggerTool('')],
      policy: allowed,
    };
  }
}

/** Image blocks replaced by a note the model can read (the provider would refuse the request). */
export function withoutImages(messages: ChatMessage[], model: string): ChatMessage[] {
  const strip = <B extends { type: string }>(blocks: B[]): B[] =>
    blocks.map((b) =>
      b.type === 'image'
        ? ({
            type: 'text',
            text: `[an image (${(b as { mime?: string }).mime ?? 'image'}) was attached here; ${model} cannot see images]`,
          } as unknown as B)
        : b,
    );
  return messages.map((m) => (m.role === 'assistant' ? m : { ...m, content: strip(m.content) }) as ChatMessage);
}
