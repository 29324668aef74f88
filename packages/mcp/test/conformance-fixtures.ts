import { connect, type EngClient } from '@eng/sdk';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';

// The fixtures of the MCP conformance suite's "everything server" (0.1.13), written as ordinary
// engine functions on @eng/sdk: tools whose function ids are the fixture names, resources and
// prompts through `"mcp.resource"` / `"mcp.prompt"` metadata, and the per-call functions
// eng-mcp passes in `metadata.mcp` (log, progress, sampling, elicitation, close_stream). Nothing in
// eng-mcp knows these names.

/** A 1×1 red PNG. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A valid WAV file: 16-bit mono PCM at 8 kHz, 8 samples of silence. */
export function wavBase64(): string {
  const samples = 8;
  const data = samples * 2;
  const wav = Buffer.alloc(44 + data);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + data, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(8000, 24); // sample rate
  wav.writeUInt32LE(16000, 28); // byte rate
  wav.writeUInt16LE(2, 32); // block align
  wav.writeUInt16LE(16, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(data, 40);
  return wav.toString('base64');
}

export interface CallMetadata {
  token: string;
  log_function: string;
  sampling_function: string;
  elicitation_function: string;
  close_stream_function: string;
  progress_token?: string;
  progress_function?: string;
}

export const mcpOf = (ctx: { metadata?: unknown }): CallMetadata => {
  const mcp = (ctx.metadata as { mcp?: CallMetadata } | undefined)?.mcp;
  if (!mcp?.token) throw new Error('called without MCP call metadata');
  return mcp;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const expose = { 'mcp.expose': true };
const noArgs = { type: 'object', properties: {}, additionalProperties: false };
const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

/** The 2020-12 schema of the json-schema-2020-12 scenario, published as the function's request_format. */
export const SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
  additionalProperties: false,
};

export async function conformanceWorker(engine: EngineProcess, name = 'conformance-fixtures'): Promise<EngClient> {
  const worker = connect(engine.busUrl, { name, logger: { debug() {}, info() {}, warn() {}, error() {} } });
  const tool = (id: string, handler: (input: any, ctx: { metadata?: unknown }) => unknown, requestFormat: unknown = noArgs) =>
    worker.registerFunction(id, handler as never, {
      description: `conformance fixture ${id}`,
      request_format: requestFormat,
      metadata: expose,
    });

  // ── tools ───────────────────────────────────────────────────────────────────────────────
  tool('test_simple_text', () => text('This is a simple text response for testing.'));
  tool('test_image_content', () => ({ content: [{ type: 'image', data: PNG_BASE64, mimeType: 'image/png' }] }));
  tool('test_audio_content', () => ({ content: [{ type: 'audio', data: wavBase64(), mimeType: 'audio/wav' }] }));
  tool('test_embedded_resource', () => ({
    content: [
      {
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      },
    ],
  }));
  tool('test_multiple_content_types', () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG_BASE64, mimeType: 'image/png' },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  }));
  tool('test_tool_with_logging', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    for (const [i, message] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
      if (i > 0) await sleep(50);
      await worker.call(mcp.log_function, { token: mcp.token, level: 'info', data: message, logger: 'conformance' });
    }
    return text('Tool with logging executed successfully');
  });
  tool('test_error_handling', () => {
    throw new Error('This tool intentionally returns an error for testing');
  });
  tool('test_tool_with_progress', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    for (const [i, progress] of [0, 50, 100].entries()) {
      if (i > 0) await sleep(50);
      if (mcp.progress_token && mcp.progress_function) {
        await worker.call(mcp.progress_function, { token: mcp.progress_token, progress, total: 100, message: `${progress}%` });
      }
    }
    return text('Tool with progress executed successfully');
  });
  tool(
    'test_sampling',
    async (input: { prompt: string }, ctx) => {
      const mcp = mcpOf(ctx);
      const reply = await worker.call<{ content: { type: string; text?: string } }>(mcp.sampling_function, {
        token: mcp.token,
        messages: [{ role: 'user', content: { type: 'text', text: input.prompt } }],
        maxTokens: 100,
      });
      return text(`LLM response: ${reply.content.text ?? JSON.stringify(reply.content)}`);
    },
    { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  );
  const elicit = async (ctx: { metadata?: unknown }, message: string, requestedSchema: unknown, prefix: string) => {
    const mcp = mcpOf(ctx);
    const reply = await worker.call<{ action: string; content?: unknown }>(mcp.elicitation_function, {
      token: mcp.token,
      message,
      requestedSchema,
    });
    return text(`${prefix}: action=${reply.action}, content=${JSON.stringify(reply.content ?? {})}`);
  };
  tool(
    'test_elicitation',
    (input: { message: string }, ctx) =>
      elicit(
        ctx,
        input.message,
        {
          type: 'object',
          properties: {
            username: { type: 'string', description: "User's response" },
            email: { type: 'string', description: "User's email address" },
          },
          required: ['username', 'email'],
        },
        'User response',
      ),
    { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  );
  tool('test_elicitation_sep1034_defaults', (_input, ctx) =>
    elicit(
      ctx,
      'Please review and update the form fields with defaults',
      {
        type: 'object',
        properties: {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        },
        required: [],
      },
      'Elicitation completed',
    ),
  );
  tool('test_elicitation_sep1330_enums', (_input, ctx) =>
    elicit(
      ctx,
      'Please select options from the enum fields',
      {
        type: 'object',
        properties: {
          untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            description: 'Titled single-select',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: {
            type: 'string',
            description: 'Legacy titled enum',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three'],
          },
          untitledMulti: {
            type: 'array',
            description: 'Untitled multi-select',
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            description: 'Titled multi-select',
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        },
        required: [],
      },
      'Elicitation completed',
    ),
  );
  tool('test_reconnection', async (_input, ctx) => {
    const mcp = mcpOf(ctx);
    // SEP-1699: end the HTTP stream mid-call; the client comes back with Last-Event-ID for the result
    const closed = await worker.call<{ closed: boolean; reason?: string }>(mcp.close_stream_function, { token: mcp.token, retry_ms: 200 });
    await sleep(100);
    return text(`Reconnection test completed (stream closed: ${closed.closed}${closed.reason ? `, ${closed.reason}` : ''})`);
  });
  tool('json_schema_2020_12_tool', (input) => text(`received ${JSON.stringify(input)}`), SCHEMA_2020_12);

  // ── resources ───────────────────────────────────────────────────────────────────────────
  worker.registerFunction('test_fixture::static_text', () => 'This is the content of the static text resource.', {
    description: 'A static text resource',
    metadata: { ...expose, 'mcp.resource': { uri: 'test://static-text', name: 'static-text', mime_type: 'text/plain' } },
  });
  worker.registerFunction('test_fixture::static_binary', () => ({ blob: PNG_BASE64, mimeType: 'image/png' }), {
    description: 'A static binary resource (a PNG)',
    metadata: { ...expose, 'mcp.resource': { uri: 'test://static-binary', name: 'static-binary', mime_type: 'image/png' } },
  });
  worker.registerFunction(
    'test_fixture::template_data',
    (input: { id: string; uri: string }) => ({
      contents: [
        {
          uri: input.uri,
          mimeType: 'application/json',
          text: JSON.stringify({ id: input.id, templateTest: true, data: `Data for ID: ${input.id}` }),
        },
      ],
    }),
    {
      description: 'Data of one id (a resource template)',
      metadata: {
        ...expose,
        'mcp.resource': { uri_template: 'test://template/{id}/data', name: 'template-data', mime_type: 'application/json' },
      },
    },
  );
  worker.registerFunction('test_fixture::watched', () => 'watched', {
    description: 'A resource clients subscribe to',
    metadata: { ...expose, 'mcp.resource': { uri: 'test://watched-resource', name: 'watched-resource', mime_type: 'text/plain' } },
  });

  // ── prompts ─────────────────────────────────────────────────────────────────────────────
  worker.registerFunction('test_fixture::simple_prompt', () => 'This is a simple prompt for testing.', {
    description: 'A simple prompt without arguments',
    metadata: { ...expose, 'mcp.prompt': { name: 'test_simple_prompt' } },
  });
  worker.registerFunction(
    'test_fixture::prompt_with_arguments',
    (args: { arg1: string; arg2: string }) => `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`,
    {
      description: 'A prompt with two arguments',
      metadata: {
        ...expose,
        'mcp.prompt': {
          name: 'test_prompt_with_arguments',
          arguments: [
            { name: 'arg1', description: 'First test argument', required: true },
            { name: 'arg2', description: 'Second test argument', required: true },
          ],
        },
      },
    },
  );
  worker.registerFunction(
    'test_fixture::prompt_with_embedded_resource',
    (args: { resourceUri: string }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
    {
      description: 'A prompt that embeds a resource',
      metadata: {
        ...expose,
        'mcp.prompt': {
          name: 'test_prompt_with_embedded_resource',
          arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
        },
      },
    },
  );
  worker.registerFunction(
    'test_fixture::prompt_with_image',
    () => ({
      messages: [
        { role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } },
        { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
      ],
    }),
    { description: 'A prompt with an image', metadata: { ...expose, 'mcp.prompt': { name: 'test_prompt_with_image' } } },
  );

  await worker.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === 'test_fixture::prompt_with_image');
  });
  return worker;
}
