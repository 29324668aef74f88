import { redactText, redactUrl } from '@eng/protocol';
import type { EngineView, TriggerRow, WorkerRow } from './engine-view.ts';
import {
  CONTROL_PLANE_FLOOR,
  contributesNonTool,
  type ExposurePolicy,
  type FunctionRow,
  functionIdOf,
  HARD_FLOOR,
  isExposed,
  toolName,
} from './exposure.ts';
import { ErrorCode, RpcError } from './rpc-error.ts';
import type { CallFunctionIds } from './tools.ts';

// spec: seed §2.13, mcp.md §8 and §10, MCP server/resources. Every payload is filtered through the
// exposure gate, so no resource names a hidden function (mcp.md §3 gaps: the reference leaked them).

/** -32002 is MCP's "resource not found" (2025 revisions). */
export const RESOURCE_NOT_FOUND = -32002;
const JSON_TYPE = 'application/json';

export const RESOURCES = [
  { uri: 'eng://functions', name: 'functions', title: 'Functions', description: 'Functions exposed as MCP tools', mimeType: JSON_TYPE },
  {
    uri: 'eng://workers',
    name: 'workers',
    title: 'Workers',
    description: 'Workers connected to the engine (only exposed function ids are listed)',
    mimeType: JSON_TYPE,
  },
  { uri: 'eng://triggers', name: 'triggers', title: 'Triggers', description: 'Triggers bound to exposed functions', mimeType: JSON_TYPE },
  {
    uri: 'eng://context',
    name: 'context',
    title: 'Context',
    description: 'How this server exposes functions: naming, metadata keys, tier, hard floor',
    mimeType: JSON_TYPE,
  },
];

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: 'eng://function/{id}',
    name: 'function',
    title: 'Function',
    description: 'One exposed function by id',
    mimeType: JSON_TYPE,
  },
  { uriTemplate: 'eng://worker/{id}', name: 'worker', title: 'Worker', description: 'One worker by id or name', mimeType: JSON_TYPE },
  {
    uriTemplate: 'eng://trigger/{id}',
    name: 'trigger',
    title: 'Trigger',
    description: 'One trigger of an exposed function',
    mimeType: JSON_TYPE,
  },
];

export interface ContextInfo {
  server: { name: string; version: string };
  transport: string;
  engineUrl: string;
  policy: ExposurePolicy;
  builtinsVisible: boolean;
  functionIds: CallFunctionIds;
}

const notFound = (uri: string) => new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });

function functionPayload(row: FunctionRow) {
  return {
    function_id: row.function_id,
    // a function that defines a resource or a prompt is not a tool
    tool_name: contributesNonTool(row) ? null : toolName(row.function_id),
    description: row.description ?? null,
    request_format: row.request_format ?? null,
    response_format: row.response_format ?? null,
    metadata: row.metadata ?? null,
  };
}

/** `eng://x/<id>` → id; percent-encoding is undone (`orders%3A%3Aplace`). */
function templateId(uri: string, prefix: string): string | undefined {
  if (!uri.startsWith(prefix)) return undefined;
  const raw = uri.slice(prefix.length);
  if (raw === '') return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

export class ResourceService {
  constructor(
    private readonly view: EngineView,
    private readonly policy: ExposurePolicy,
  ) {}

  /** URIs clients may subscribe to: any absolute URI (updates only ever come for ours). */
  static validUri(uri: unknown): uri is string {
    if (typeof uri !== 'string' || uri === '') return false;
    return /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(uri);
  }

  private async exposedFunctions(): Promise<FunctionRow[]> {
    return (await this.view.listFunctions()).filter((row) => isExposed(row, this.policy));
  }

  private filterWorker(worker: WorkerRow, exposed: Set<string>): WorkerRow {
    const functions = Array.isArray(worker.functions) ? worker.functions.filter((id) => exposed.has(id)) : [];
    return { ...worker, functions, function_count: functions.length };
  }

  /** The JSON payload behind a URI; throws -32002 for anything unknown or hidden. */
  async payload(uri: string, context: () => ContextInfo): Promise<unknown> {
    switch (uri) {
      case 'eng://functions':
        return (await this.exposedFunctions()).map(functionPayload);
      case 'eng://workers': {
        const exposed = new Set((await this.exposedFunctions()).map((row) => row.function_id));
        return (await this.view.listWorkers()).map((worker) => this.filterWorker(worker, exposed));
      }
      case 'eng://triggers': {
        const exposed = new Set((await this.exposedFunctions()).map((row) => row.function_id));
        return (await this.view.listTriggers()).filter((trigger) => exposed.has(trigger.function_id));
      }
      case 'eng://context':
        return this.context(context());
    }
    const functionId = templateId(uri, 'eng://function/');
    if (functionId !== undefined) {
      const listed = this.view.idForTool(functionId);
      const candidates = functionId.includes('::') ? [functionId] : [...new Set([listed ?? functionIdOf(functionId), functionId])];
      for (const id of candidates) {
        const row = await this.view.functionInfo(id);
        if (row && isExposed(row, this.policy)) return functionPayload(row);
      }
      throw notFound(uri);
    }
    const workerId = templateId(uri, 'eng://worker/');
    if (workerId !== undefined) {
      const worker = (await this.view.listWorkers()).find((w) => w.id === workerId || w.name === workerId);
      if (!worker) throw notFound(uri);
      const exposed = new Set((await this.exposedFunctions()).map((row) => row.function_id));
      return this.filterWorker(worker, exposed);
    }
    const triggerId = templateId(uri, 'eng://trigger/');
    if (triggerId !== undefined) {
      const trigger: TriggerRow | null = await this.view.triggerInfo(triggerId).catch(async () => {
        return (await this.view.listTriggers()).find((t) => t.id === triggerId) ?? null;
      });
      if (!trigger) throw notFound(uri);
      const row = await this.view.functionInfo(trigger.function_id);
      if (!row || !isExposed(row, this.policy)) throw notFound(uri);
      const { trigger: _type, function: _fn, ...summary } = trigger as TriggerRow & { trigger?: unknown; function?: unknown };
      return summary;
    }
    throw notFound(uri);
  }

  async read(uri: string, context: () => ContextInfo): Promise<{ contents: Array<{ uri: string; mimeType: string; text: string }> }> {
    let payload: unknown;
    try {
      payload = await this.payload(uri, context);
    } catch (err) {
      if (err instanceof RpcError) throw err;
      throw new RpcError(ErrorCode.InternalError, `cannot read ${uri} from the eng engine: ${redactText((err as Error).message)}`);
    }
    return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(payload, null, 2) }] };
  }

  private context(info: ContextInfo) {
    return {
      server: info.server,
      sdk: '@eng/sdk',
      transport: info.transport,
      // credentials in the engine URL never reach a client
      engine_url: redactUrl(info.engineUrl),
      function_id_delimiter: '::',
      tool_name_delimiter: '__',
      exposure: {
        metadata_key: 'mcp.expose',
        tier_key: 'mcp.tier',
        tier: info.policy.tier ?? null,
        expose_all: info.policy.exposeAll,
        hard_floor: [...HARD_FLOOR, ...CONTROL_PLANE_FLOOR],
        hard_floor_metadata: 'functions whose metadata has "internal": true are floored too',
        annotations: 'metadata.mcp.{title, read_only_hint, destructive_hint, idempotent_hint, open_world_hint}',
      },
      builtins_visible: info.builtinsVisible,
      invocation_metadata: {
        key: 'mcp',
        token: 'metadata.mcp.token names the tool call; every function below acts on that call only',
        progress: `call metadata.mcp.progress_function (${info.functionIds.progress}) with {token: metadata.mcp.progress_token, progress, total?, message?}`,
        log: `call metadata.mcp.log_function (${info.functionIds.log}) with {level, data, logger?, token}`,
        sampling: `call metadata.mcp.sampling_function (${info.functionIds.sampling}) with {token, messages, maxTokens, …}: the client's sampling/createMessage answer`,
        elicitation: `call metadata.mcp.elicitation_function (${info.functionIds.elicitation}) with {token, message, requestedSchema}: the client's elicitation/create answer`,
        close_stream: `call metadata.mcp.close_stream_function (${info.functionIds.closeStream}) with {token, retry_ms?}: end the HTTP stream of the call; the client resumes it with Last-Event-ID`,
        content: 'a result {content: [MCP content blocks], structuredContent?, isError?} is passed through as the tool result',
      },
      contributions: {
        resource:
          'metadata "mcp.resource": {uri | uri_template, name?, title?, description?, mime_type?}; read by calling the function with {uri, ...template variables}',
        prompt:
          'metadata "mcp.prompt": {name?, title?, description?, arguments?: [{name, description?, required?}]}; rendered by calling the function with the arguments',
      },
    };
  }
}
