import { randomBytes } from 'node:crypto';
import { describeZodError, EngError, ErrorCode } from '@eng/protocol';
import type { EngClient } from '@eng/sdk';
import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { LOG_LEVELS, type SessionHub } from './sessions.ts';

// The functions eng-mcp registers on the engine for functions it calls (mcp.md §10 had fixed ids
// `mcp::progress` / `mcp::log_message`; ours carry an instance id so several eng-mcp processes on
// one engine do not take each other's over — the ids reach a called function in its invocation
// metadata, `metadata.mcp.progress_function` / `log_function`). They sit under `mcp::`, inside
// the hard floor, so they are never tools themselves.

export interface EngineFunctionIds {
  progress: string;
  log: string;
  functionsChanged: string;
  workersChanged: string;
}

export function engineFunctionIds(instance = randomBytes(4).toString('hex')): EngineFunctionIds {
  return {
    progress: `mcp::${instance}::progress`,
    log: `mcp::${instance}::log`,
    functionsChanged: `mcp::${instance}::functions_changed`,
    workersChanged: `mcp::${instance}::workers_changed`,
  };
}

const ProgressInput = z.object({
  token: z.string().min(1),
  progress: z.number().finite(),
  total: z.number().finite().optional(),
  message: z.string().optional(),
});
const LogInput = z.object({
  level: z.enum(LOG_LEVELS as [LoggingLevel, ...LoggingLevel[]]),
  data: z.unknown(),
  logger: z.string().optional(),
  token: z.string().optional(),
});

function parse<T>(schema: z.ZodType<T>, input: unknown): T {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw new EngError(ErrorCode.InvalidArguments, describeZodError(parsed.error));
  return parsed.data;
}

export function registerEngineFunctions(client: EngClient, hub: SessionHub, ids: EngineFunctionIds, onChange: () => void): void {
  client.registerFunction(
    ids.progress,
    (input) => {
      const q = parse(ProgressInput, input);
      return hub.reportProgress(q.token, q.progress, q.total, q.message);
    },
    {
      description: 'Report progress of an MCP tool call: {token: metadata.mcp.progress_token, progress, total?, message?}',
      request_format: z.toJSONSchema(ProgressInput),
    },
  );
  client.registerFunction(
    ids.log,
    (input) => {
      const q = parse(LogInput, input);
      if (q.token !== undefined) {
        const slot = hub.slot(q.token);
        if (!slot) return { ok: false, error: 'unknown or finished progress token' };
        return { ok: true, delivered: hub.log(q.level, q.data, q.logger, slot) };
      }
      return { ok: true, delivered: hub.log(q.level, q.data, q.logger) };
    },
    {
      description: 'Send an MCP log message (notifications/message) to connected clients: {level, data, logger?, token?}',
      request_format: z.toJSONSchema(LogInput),
    },
  );
  // plumbing: `internal` keeps their calls out of traces, lists and charts unless System is shown
  const plumbing = { internal: true };
  client.registerFunction(ids.functionsChanged, () => onChange(), {
    description: 'eng-mcp: the engine function set changed',
    metadata: plumbing,
  });
  client.registerFunction(ids.workersChanged, () => onChange(), { description: 'eng-mcp: a worker connected or left', metadata: plumbing });
  client.registerTrigger({ type: 'engine::functions-available', function_id: ids.functionsChanged, config: {} });
  client.registerTrigger({ type: 'engine::workers-available', function_id: ids.workersChanged, config: {} });
}
