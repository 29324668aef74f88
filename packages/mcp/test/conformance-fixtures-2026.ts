import { connect, type EngClient } from '@eng/sdk';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';

// The fixtures the 2026-07-28 scenarios of the MCP conformance suite (0.2.0-alpha.12) ask for,
// written as ordinary engine functions like conformance-fixtures.ts. They ask the client through the
// per-call functions of `metadata.mcp` exactly as on 2025-11-25 (`elicitation_function`,
// `sampling_function`, `roots_function`); `input_key` names the request in `inputRequests`, and
// functions the client is asked by in parallel come back as one input-required result.
// Nothing in eng-mcp knows these names.

interface Mcp {
  token: string;
  log_function: string;
  sampling_function: string;
  elicitation_function: string;
  roots_function: string;
  client_capabilities?: Record<string, unknown>;
}

const mcpOf = (ctx: { metadata?: unknown }): Mcp => {
  const mcp = (ctx.metadata as { mcp?: Mcp } | undefined)?.mcp;
  if (!mcp?.token) throw new Error('called without MCP call metadata');
  return mcp;
};

const expose = { 'mcp.expose': true };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const noArgs = { type: 'object', properties: {}, additionalProperties: false };
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
const nameSchema = (property: string) => ({
  type: 'object',
  properties: { [property]: { type: 'string' } },
  required: [property],
});

export async function conformanceWorker2026(engine: EngineProcess, name = 'conformance-fixtures-2026'): Promise<EngClient> {
  const worker = connect(engine.busUrl, { name, logger: { debug() {}, info() {}, warn() {}, error() {} } });
  const tool = (id: string, handler: (input: any, ctx: { metadata?: unknown }) => unknown, requestFormat: unknown = noArgs) =>
    worker.registerFunction(id, handler as never, {
      description: `conformance fixture ${id}`,
      request_format: requestFormat,
      metadata: expose,
    });
  const elicit = (mcp: Mcp, key: string, message: string, property: string) =>
    worker.call<{ action: string; content?: Record<string, unknown> }>(mcp.elicitation_function, {
      token: mcp.token,
      input_key: key,
      message,
      requestedSchema: nameSchema(property),
    });
  const sample = (mcp: Mcp, key: string, prompt: string, maxTokens: number) =>
    worker.call<{ content: { type: string; text?: string } }>(mcp.sampling_function, {
      token: mcp.token,
      input_key: key,
      messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
      maxTokens,
    });
  const roots = (mcp: Mcp, key: string) =>
    worker.call<{ roots: Array<{ uri: string }> }>(mcp.roots_function, { token: mcp.token, input_key: key });

  // ── server-stateless diagnostics ──────────────────────────────────────────────────────────
  tool('test_missing_capability', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    const answer = await sample(mcp, 'needs_sampling', 'Say hi', 10);
    return text(`sampled: ${answer.content.text ?? ''}`);
  });
  tool('test_streaming_elicitation', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    const answer = await elicit(mcp, 'user_name', 'What is your name?', 'name');
    return text(`Hello, ${String(answer.content?.name ?? 'nobody')}!`);
  });
  tool('test_logging_tool', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    await worker.call(mcp.log_function, { token: mcp.token, level: 'info', data: 'a log line', logger: 'fixture' });
    return text('logged');
  });
  let dynamic = 0;
  tool('test_trigger_tool_change', () => {
    dynamic++;
    worker.registerFunction(`test_dynamic_tool_${dynamic}`, () => text('dynamic'), { description: 'added at run time', metadata: expose });
    return text(`added test_dynamic_tool_${dynamic}`);
  });
  tool('test_trigger_prompt_change', () => {
    dynamic++;
    worker.registerFunction(`fixtures::dynamic_prompt_${dynamic}`, () => 'a dynamic prompt', {
      description: 'added at run time',
      metadata: { ...expose, 'mcp.prompt': { name: `test_dynamic_prompt_${dynamic}` } },
    });
    return text(`added test_dynamic_prompt_${dynamic}`);
  });

  // ── SEP-2243 custom headers ─────────────────────────────────────────────────────────────
  tool('test_custom_header', ({ region }: { region?: string }) => text(`region ${region ?? 'none'}`), {
    type: 'object',
    properties: { region: { type: 'string', description: 'routed by the Mcp-Param-Region header', 'x-mcp-header': 'Region' } },
    required: ['region'],
  });

  // ── SEP-2322 input-required results ──────────────────────────────────────────────────────
  tool('test_input_required_result_elicitation', async (_input, ctx) => {
    const answer = await elicit(mcpOf(ctx), 'user_name', 'What is your name?', 'name');
    return text(`Hello, ${String(answer.content?.name ?? 'nobody')}!`);
  });
  tool('test_input_required_result_tampered_state', async (_input, ctx) => {
    const answer = await elicit(mcpOf(ctx), 'user_name', 'What is your name?', 'name');
    return text(`Hello, ${String(answer.content?.name ?? 'nobody')}!`);
  });
  tool('test_input_required_result_sampling', async (_input, ctx) => {
    const answer = await sample(mcpOf(ctx), 'capital_question', 'What is the capital of France?', 100);
    return text(`The model said: ${answer.content.text ?? ''}`);
  });
  tool('test_input_required_result_list_roots', async (_input, ctx) => {
    const answer = await roots(mcpOf(ctx), 'client_roots');
    return text(`roots: ${answer.roots.map((r) => r.uri).join(', ')}`);
  });
  tool('test_input_required_result_request_state', async (_input, ctx) => {
    const answer = await worker.call<{ action: string; content?: { ok?: boolean } }>(mcpOf(ctx).elicitation_function, {
      token: mcpOf(ctx).token,
      input_key: 'confirm',
      message: 'Please confirm',
      requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    });
    // the request state eng-mcp issued came back intact, or this function would not be running
    return text(`state-ok: confirmed=${String(answer.content?.ok)}`);
  });
  tool('test_input_required_result_multiple_inputs', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    const [user, greeting, listed] = await Promise.all([
      elicit(mcp, 'user_name', 'What is your name?', 'name'),
      sample(mcp, 'greeting', 'Generate a greeting', 50),
      roots(mcp, 'client_roots'),
    ]);
    return text(`${greeting.content.text ?? ''} ${String(user.content?.name)} (${listed.roots.length} roots)`);
  });
  tool('test_input_required_result_multi_round', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    const first = await elicit(mcp, 'step1', 'Step 1: What is your name?', 'name');
    const second = await elicit(mcp, 'step2', 'Step 2: What is your favorite color?', 'color');
    return text(`${String(first.content?.name)} likes ${String(second.content?.color)}`);
  });
  tool('test_input_required_result_capabilities', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    const caps = mcp.client_capabilities ?? {};
    const asks: Array<Promise<unknown>> = [];
    if (caps.elicitation) asks.push(elicit(mcp, 'user_name', 'What is your name?', 'name'));
    if (caps.sampling) asks.push(sample(mcp, 'greeting', 'Generate a greeting', 50));
    if (caps.roots) asks.push(roots(mcp, 'client_roots'));
    await Promise.all(asks);
    return text(`asked ${asks.length} of what the client can answer`);
  });
  // ── SEP-2663 tasks (`"mcp.task"` metadata) ─────────────────────────────────────────────────
  const taskTool = (
    id: string,
    mode: unknown,
    handler: (input: any, ctx: { metadata?: unknown }) => unknown,
    requestFormat: unknown = { type: 'object' },
  ) =>
    worker.registerFunction(id, handler as never, {
      description: `conformance fixture ${id}`,
      request_format: requestFormat,
      metadata: { ...expose, 'mcp.task': mode },
    });
  tool('greet', ({ name }: { name?: string }) => text(`Hello, ${name ?? 'World'}!`), {
    type: 'object',
    properties: { name: { type: 'string' } },
  });
  taskTool(
    'slow_compute',
    'optional',
    async ({ seconds, label }: { seconds?: number; label?: string }, ctx) => {
      const mcp = ctx.metadata as { mcp?: { progress_token?: string; progress_function?: string } };
      const progress = mcp?.mcp;
      if (progress?.progress_token && progress.progress_function) {
        await worker.call(progress.progress_function, { token: progress.progress_token, progress: 1, message: `computing ${label ?? ''}` });
      }
      await sleep((seconds ?? 1) * 1000);
      return text(`computed ${label ?? 'result'} after ${seconds ?? 1}s`);
    },
    { type: 'object', properties: { seconds: { type: 'number' }, label: { type: 'string' } } },
  );
  taskTool('failing_job', 'required', async () => {
    await sleep(1000);
    return { content: [{ type: 'text', text: 'the job failed' }], isError: true };
  });
  taskTool('protocol_error_job', 'optional', async () => {
    await sleep(100);
    throw new Error('the job crashed');
  });
  taskTool('confirm_delete', 'optional', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    const answer = await worker.call<{ action: string; content?: { confirm?: boolean } }>(mcp.elicitation_function, {
      token: mcp.token,
      input_key: 'confirm',
      message: 'Delete everything?',
      requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
    });
    return text(answer.action === 'accept' ? 'deleted' : 'kept');
  });
  taskTool('multi_input', 'optional', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    const [first, second] = await Promise.all([
      elicit(mcp, 'first_name', 'First name?', 'name'),
      elicit(mcp, 'last_name', 'Last name?', 'name'),
    ]);
    return text(`${String(first.content?.name)} ${String(second.content?.name)}`);
  });
  taskTool('test_tool_with_task', { support: 'required', start: 'on_request' }, async (_input, ctx) => {
    const mcp = mcpOf(ctx) as Mcp & { task_function: string };
    const answer = await elicit(mcp, 'user_name', 'What is your name?', 'name');
    await worker.call(mcp.task_function, { token: mcp.token });
    await sleep(200);
    return text(`Hello, ${String(answer.content?.name)}, from a task`);
  });

  worker.registerFunction(
    'fixtures::input_required_prompt',
    async (_input: unknown, ctx: { metadata?: unknown }) => {
      const answer = await elicit(mcpOf(ctx), 'user_context', 'What context should the prompt use?', 'context');
      return `Use this context: ${String(answer.content?.context)}`;
    },
    {
      description: 'a prompt that asks the user first',
      metadata: { ...expose, 'mcp.prompt': { name: 'test_input_required_result_prompt', description: 'asks for context (MRTR)' } },
    },
  );

  // ── SEP-2640 skills (`"mcp.skill"` metadata): the function answers the skill's files ──────────
  const pdfDescription = 'Extract, fill, and assemble PDF documents';
  worker.registerFunction(
    'fixtures::skill_pdf',
    () => ({
      'SKILL.md': `---\nname: pdf-processing\ndescription: ${pdfDescription}\nlicense: Apache-2.0\nmetadata:\n  version: "2.1.0"\n---\n\n# PDF processing\n\nPick the matching template from \`templates/\`, then run \`scripts/extract.py\`.\n`,
      'templates/invoice.md': '# Invoice\n',
      'templates/regional/eu-invoice.md': '# EU invoice\n',
      'scripts/extract.py': 'print("extract")\n',
    }),
    { description: pdfDescription, metadata: { ...expose, 'mcp.skill': 'pdf-processing' } },
  );
  worker.registerFunction(
    'fixtures::skill_refunds',
    () => `---\nname: refunds\ndescription: Process customer refund requests per company policy\n---\n\nRefund within 30 days.\n`,
    {
      description: 'Process customer refund requests per company policy',
      metadata: { ...expose, 'mcp.skill': { path: 'acme/billing/refunds' } },
    },
  );

  await worker.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === 'fixtures::skill_refunds');
  });
  return worker;
}
