import type { ChannelRef } from '@eng/sdk';

// spec: console-worker §2.2 (messages), §2.4 (models, providers). The shapes that cross the bus
// between the harness, the router, the providers and the context manager.

export type StopReason = 'end' | 'length' | 'function_call' | 'aborted' | 'error';
export type ErrorKind = 'auth_expired' | 'rate_limited' | 'context_overflow' | 'transient' | 'permanent';

export interface Usage {
  input?: number;
  output?: number;
  cache_read?: number;
  cache_write?: number;
  reasoning?: number;
}

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; mime: string; data: string; attachment_id?: string }
  | { type: 'file'; attachment_id: string; name: string; mime: string; size: number }
  | { type: 'thinking'; text: string; signature?: string }
  | { type: 'function_call'; id: string; function_id: string; arguments: unknown }
  | { type: 'function_result'; function_call_id: string; content: ContentBlock[]; is_error?: boolean };

export interface UserMessage {
  role: 'user';
  content: ContentBlock[];
  timestamp: number;
}

export interface AssistantMessage {
  role: 'assistant';
  content: ContentBlock[];
  stop_reason: StopReason;
  native_stop_reason?: string;
  error_message?: string;
  error_kind?: ErrorKind;
  warnings?: string[];
  usage?: Usage;
  model: string;
  provider: string;
  timestamp: number;
}

export interface FunctionResultMessage {
  role: 'function_result';
  function_call_id: string;
  function_id: string;
  content: ContentBlock[];
  details?: unknown;
  is_error: boolean;
  timestamp: number;
}

export interface CustomMessage {
  role: 'custom';
  custom_type: string;
  content: ContentBlock[];
  timestamp: number;
}

export type AgentMessage = UserMessage | AssistantMessage | FunctionResultMessage | CustomMessage;

export type Modality = 'chat' | 'stt' | 'tts';

/** spec §2.4: the golden `Model` record. */
export interface Model {
  id: string;
  provider: string;
  display_name?: string;
  context_window: number;
  max_output_tokens: number;
  supports_thinking?: boolean;
  supports_tools?: boolean;
  supports_vision?: boolean;
  supports_structured_output?: boolean;
  reasoning_efforts?: Array<{ effort: string; description?: string }>;
  thinking_budgets?: Record<string, number>;
  /** Absent means chat. */
  modality?: Modality;
}

export interface ProviderInfo {
  id: string;
  display_name: string;
  configured: boolean;
  available: boolean;
  supports_model_listing: boolean;
  credential_env_var?: string;
}

/** A tool offered to the model (JSON schema parameters). */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export type ThinkingLevel = 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/**
 * The provider-neutral conversation a generation is asked for: the harness turns its transcript
 * into this (function calls become calls of its tool), the providers into their own API's shape.
 */
export type ChatMessage =
  | { role: 'user'; content: Array<Extract<ContentBlock, { type: 'text' } | { type: 'image' }>> }
  | { role: 'assistant'; content: GeneratedBlock[] }
  | {
      role: 'tool_result';
      tool_call_id: string;
      tool_name: string;
      content: Array<Extract<ContentBlock, { type: 'text' } | { type: 'image' }>>;
      is_error: boolean;
    };

/** What the router hands a provider's `provider::<id>::stream`. */
export interface ProviderStreamRequest {
  request_id: string;
  model: string;
  messages: ChatMessage[];
  system?: string;
  tools?: ToolSpec[];
  max_output_tokens?: number;
  thinking_level?: ThinkingLevel;
  provider_options?: Record<string, unknown>;
  /** Bytes the answer may carry (text, thinking, tool-call arguments); the provider stops at it. */
  max_answer_bytes?: number;
  /** Write end of the channel the router relays to the caller; absent for `router::complete`. */
  writer?: ChannelRef;
}

/**
 * Frames a provider writes into the caller's channel, one JSON text frame each. `index` is the
 * block's position in the assistant message's `content`. Exactly one `done` or `error` ends it.
 */
export type StreamFrame =
  | { type: 'start'; provider: string; model: string }
  | { type: 'text_delta'; index: number; delta: string }
  | { type: 'thinking_delta'; index: number; delta: string }
  | { type: 'thinking_signature'; index: number; signature: string }
  | { type: 'toolcall_start'; index: number; id: string; name: string }
  | { type: 'toolcall_delta'; index: number; delta: string }
  | { type: 'toolcall_end'; index: number; id: string; name: string; arguments: unknown }
  | { type: 'done'; stop_reason: StopReason; native_stop_reason?: string; usage?: Usage }
  | { type: 'error'; stop_reason: 'error' | 'aborted'; error_kind: ErrorKind; message: string; usage?: Usage };

/**
 * A provider's content block as it streams: tool calls keep the provider's tool name and
 * arguments; the harness maps its `agent_trigger` tool onto `function_call` blocks.
 */
export type GeneratedBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string; signature?: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown; raw?: string };

/** Result of `provider::<id>::stream`, `router::chat` and `router::complete`. */
export interface GenerationResult {
  ok: boolean;
  provider: string;
  model: string;
  content: GeneratedBlock[];
  stop_reason: StopReason;
  native_stop_reason?: string;
  usage?: Usage;
  error?: { kind: ErrorKind; message: string };
}
