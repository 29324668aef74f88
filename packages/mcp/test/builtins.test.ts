/**
 * The six built-in tools (seed §2.12, mcp.md §7): visibility for every flag combination on both
 * transports, the disabled / stdio-only refusals, workers spawned from source in Node (on
 * @eng/sdk) and Python (standard library only) — register, list, call, stop — and triggers.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect, type EngClient } from '@eng/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { BUILTINS, demoWorker, httpBase, httpClient, httpMcp, type StdioMcp, startMcpEngine, stdioMcp, textOf } from './helpers.ts';

const STDIO_ONLY_TEXT = 'This tool requires stdio transport (worker/trigger management is not available over HTTP)';

let engine: EngineProcess;
let worker: EngClient;
let recorder: EngClient;
let mcp: StdioMcp;
const hits: unknown[] = [];

const call = (client: Client, name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args });
const json = (result: unknown) => JSON.parse(textOf(result));
const engineWorkerDirs = () => readdirSync(tmpdir()).filter((d) => d.startsWith('eng-worker-'));

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name);
}

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = await demoWorker(engine);
  recorder = connect(engine.busUrl, { name: 'recorder', logger: { debug() {}, info() {}, warn() {}, error() {} } });
  recorder.registerFunction('rec::hit', (input) => void hits.push(input), { metadata: { 'mcp.expose': true } });
  await recorder.ready();
  mcp = await stdioMcp(engine);
});
afterAll(async () => {
  await mcp?.close();
  await recorder?.close();
  await worker?.close();
  await engine?.stop();
});

describe('visibility', () => {
  it('stdio: shown by default, hidden everywhere by --no-builtins (which wins over --http-builtins)', async () => {
    expect((await names(mcp.client)).filter((n) => BUILTINS.includes(n))).toEqual(BUILTINS);
    for (const flags of [['--no-builtins'], ['--no-builtins', '--http-builtins']]) {
      const hidden = await stdioMcp(engine, flags);
      try {
        expect((await names(hidden.client)).some((n) => BUILTINS.includes(n))).toBe(false);
        const refused = await call(hidden.client, 'eng_trigger_void', { function_id: 'rec::hit', payload: {} });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toBe("Tool 'eng_trigger_void' is disabled on this server (--no-builtins is set)");
      } finally {
        await hidden.close();
      }
    }
    const both = await stdioMcp(engine, ['--http-builtins']);
    try {
      expect((await names(both.client)).filter((n) => BUILTINS.includes(n))).toEqual(BUILTINS);
    } finally {
      await both.close();
    }
  }, 120_000);

  it('HTTP: hidden by default, shown with --http-builtins, hidden again with --no-builtins', async () => {
    const cases: Array<{ flags: string[]; visible: boolean; text?: string }> = [
      {
        flags: [],
        visible: false,
        text: "Tool 'eng_trigger_void' is disabled on this server over HTTP (start eng-mcp with --http-builtins to enable it)",
      },
      { flags: ['--http-builtins'], visible: true },
      { flags: ['--no-builtins'], visible: false, text: "Tool 'eng_trigger_void' is disabled on this server (--no-builtins is set)" },
      {
        flags: ['--no-builtins', '--http-builtins'],
        visible: false,
        text: "Tool 'eng_trigger_void' is disabled on this server (--no-builtins is set)",
      },
    ];
    for (const { flags, visible, text } of cases) {
      const server = await httpMcp(engine, flags);
      try {
        const client = await httpClient(server.url);
        const listed = (await names(client)).filter((n) => BUILTINS.includes(n));
        expect(listed, flags.join(' ')).toEqual(visible ? BUILTINS : []);
        const result = await call(client, 'eng_trigger_void', { function_id: 'rec::hit', payload: { via: 'http' } });
        if (text) {
          expect(result.isError).toBe(true);
          expect(textOf(result)).toBe(text);
        } else {
          expect(textOf(result)).toBe('Triggered (void): rec::hit');
          await waitFor(() => hits.some((h) => (h as { via?: string }).via === 'http'));
          // the ones that need this process's children or connection stay stdio-only
          for (const name of ['eng_worker_register', 'eng_worker_stop', 'eng_trigger_register', 'eng_trigger_unregister']) {
            const refused = await call(client, name, {});
            expect(refused.isError).toBe(true);
            expect(textOf(refused)).toBe(STDIO_ONLY_TEXT);
          }
        }
        await client.close();
      } finally {
        await server.stop();
      }
    }
  }, 120_000);
});

describe('eng_worker_register / eng_worker_stop', () => {
  it('Node: spawns a worker on @eng/sdk, the tool appears and answers, stop removes it and its files', async () => {
    const created = await call(mcp.client, 'eng_worker_register', {
      language: 'node',
      function_name: 'gen::greet',
      description: 'Greets someone',
      code: "async (input) => ({ greeting: 'hello ' + input.name })",
    });
    expect(created.isError, textOf(created)).toBe(false);
    const info = json(created);
    expect(info).toMatchObject({ id: expect.stringMatching(/^worker-[0-9a-f-]{36}$/), function_name: 'gen::greet', tool: 'gen__greet' });
    const { tools } = await mcp.client.listTools();
    expect(tools.find((t) => t.name === 'gen__greet')?.description).toBe('Greets someone');
    expect(json(await call(mcp.client, 'gen__greet', { name: 'bob' }))).toEqual({ greeting: 'hello bob' });
    expect(engineWorkerDirs()).toContain(`eng-${info.id}`);

    const stopped = await call(mcp.client, 'eng_worker_stop', { id: info.id });
    expect(json(stopped)).toEqual({ id: info.id, message: 'Worker stopped and cleaned up' });
    expect(existsSync(`${tmpdir()}/eng-${info.id}`)).toBe(false);
    await waitFor(async () => !(await names(mcp.client)).includes('gen__greet'));
    const again = await call(mcp.client, 'eng_worker_stop', { id: info.id });
    expect(textOf(again)).toBe(`Worker not found: ${info.id}`);
  });

  it('Python: a standard-library worker registers, answers (sync and async handlers) and stops', async () => {
    const created = await call(mcp.client, 'eng_worker_register', {
      language: 'python',
      function_name: 'py::square',
      code: 'async def handler(input):\n    return {"square": input["n"] * input["n"], "lang": "python"}',
    });
    expect(created.isError, textOf(created)).toBe(false);
    const info = json(created);
    expect(json(await call(mcp.client, 'py__square', { n: 7 }))).toEqual({ square: 49, lang: 'python' });
    const failing = await call(mcp.client, 'eng_worker_register', {
      language: 'py',
      function_name: 'py::boom',
      code: 'def handler(input):\n    raise ValueError("bad input")',
    });
    const boomInfo = json(failing);
    const boom = await call(mcp.client, 'py__boom', {});
    expect(boom.isError).toBe(true);
    expect(textOf(boom)).toBe('Error: remote error (invocation_failed): bad input');
    for (const id of [info.id, boomInfo.id]) expect(textOf(await call(mcp.client, 'eng_worker_stop', { id }))).toContain('cleaned up');
  });

  it('refuses bad requests before writing anything', async () => {
    const before = engineWorkerDirs().length;
    const ruby = await call(mcp.client, 'eng_worker_register', { language: 'ruby', function_name: 'x::y', code: 'x' });
    expect(textOf(ruby)).toBe('Unsupported language: ruby');
    const floor = await call(mcp.client, 'eng_worker_register', {
      language: 'node',
      function_name: 'engine::functions::list',
      code: '() => 1',
    });
    expect(textOf(floor)).toContain('internal namespace');
    const taken = await call(mcp.client, 'eng_worker_register', { language: 'node', function_name: 'demo::echo', code: '() => 1' });
    expect(textOf(taken)).toContain("Function 'demo::echo' is already registered");
    const missing = await call(mcp.client, 'eng_worker_register', { language: 'node', function_name: 'x::y' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^Invalid arguments: .*code/);
    const wrongType = await call(mcp.client, 'eng_worker_register', { language: 'node', function_name: 42, code: '() => 1' });
    expect(textOf(wrongType)).toMatch(/^Invalid arguments: .*function_name/);
    expect(engineWorkerDirs().length).toBe(before);
  });

  it('reports a worker that dies at start with its status and stderr, and cleans up', async () => {
    const before = engineWorkerDirs().length;
    const syntax = await call(mcp.client, 'eng_worker_register', {
      language: 'node',
      function_name: 'gen::broken',
      code: 'async (input) => {',
    });
    expect(syntax.isError).toBe(true);
    expect(textOf(syntax)).toMatch(/^Invalid code: Unexpected token/);
    const dies = await call(mcp.client, 'eng_worker_register', {
      language: 'node',
      function_name: 'gen::dies',
      code: '(() => { throw new Error("exploded at start"); })()',
    });
    expect(textOf(dies)).toMatch(/^Worker exited immediately with status: 1\n[\s\S]*exploded at start/);
    const notFunction = await call(mcp.client, 'eng_worker_register', { language: 'js', function_name: 'gen::number', code: '42' });
    expect(textOf(notFunction)).toMatch(/^Worker exited immediately with status: 2\n[\s\S]*must evaluate to a function/);
    const pyBroken = await call(mcp.client, 'eng_worker_register', { language: 'python', function_name: 'py::broken', code: 'x = 1' });
    expect(textOf(pyBroken)).toMatch(/^Worker exited immediately with status: 2\n[\s\S]*must define handler/);
    expect(engineWorkerDirs().length).toBe(before);
  });
});

describe('spawned workers end with eng-mcp', () => {
  const registered = async (id: string) => {
    const { functions } = await recorder.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === id);
  };

  it('a clean exit (stdin closed) stops them and removes their files', async () => {
    const own = await stdioMcp(engine);
    const info = json(
      await call(own.client, 'eng_worker_register', { language: 'node', function_name: 'gen::ephemeral', code: '() => 1' }),
    );
    expect(await registered('gen::ephemeral')).toBe(true);
    await own.close();
    await waitFor(async () => !(await registered('gen::ephemeral')), 15_000);
    await waitFor(() => !existsSync(`${tmpdir()}/eng-${info.id}`), 5000);
  });

  it('when eng-mcp is killed outright, its workers notice and exit', async () => {
    const own = await stdioMcp(engine);
    const node = json(await call(own.client, 'eng_worker_register', { language: 'node', function_name: 'gen::orphan', code: '() => 1' }));
    const python = json(
      await call(own.client, 'eng_worker_register', {
        language: 'python',
        function_name: 'py::orphan',
        code: 'def handler(input):\n    return 1',
      }),
    );
    process.kill(own.transport.pid as number, 'SIGKILL');
    await waitFor(async () => !(await registered('gen::orphan')) && !(await registered('py::orphan')), 15_000);
    await own.close().catch(() => undefined);
    for (const id of [node.id, python.id]) rmSync(`${tmpdir()}/eng-${id}`, { recursive: true, force: true });
  });
});

describe('eng_trigger_register / eng_trigger_unregister', () => {
  it('attaches an http trigger to an exposed function, and detaches it', async () => {
    const created = json(
      await call(mcp.client, 'eng_worker_register', {
        language: 'node',
        function_name: 'gen::api',
        code: 'async (req) => ({ status_code: 201, body: { hello: req.body?.name ?? null } })',
      }),
    );
    const attached = await call(mcp.client, 'eng_trigger_register', {
      trigger_type: 'http',
      function_id: 'gen__api',
      config: { api_path: 'mcp-made/hello', http_method: 'POST' },
    });
    expect(attached.isError, textOf(attached)).toBe(false);
    const trigger = json(attached);
    expect(trigger).toMatchObject({ trigger_type: 'http', function_id: 'gen::api', status: 'active' });
    const url = `${httpBase(engine)}/mcp-made/hello`;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"ann"}' });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ hello: 'ann' });

    expect(json(await call(mcp.client, 'eng_trigger_unregister', { id: trigger.id }))).toEqual({ id: trigger.id, message: 'Unregistered' });
    await waitFor(async () => (await fetch(url, { method: 'POST' })).status === 404);
    expect(textOf(await call(mcp.client, 'eng_trigger_unregister', { id: trigger.id }))).toBe(`Trigger not found: ${trigger.id}`);
    await call(mcp.client, 'eng_worker_stop', { id: created.id });
  });

  it('refuses hidden and floor functions, and reports the engine refusing a binding', async () => {
    const hidden = await call(mcp.client, 'eng_trigger_register', {
      trigger_type: 'http',
      function_id: 'demo::hidden',
      config: { api_path: 'x' },
    });
    expect(textOf(hidden)).toContain('is not exposed via mcp.expose metadata');
    const floor = await call(mcp.client, 'eng_trigger_register', {
      trigger_type: 'cron',
      function_id: 'state::sneaky',
      config: { expression: '* * * * * *' },
    });
    expect(textOf(floor)).toContain('internal namespace');
    const refused = await call(mcp.client, 'eng_trigger_register', {
      trigger_type: 'cron',
      function_id: 'demo::echo',
      config: { expression: 'often' },
    });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^Error: .*invalid cron expression/);
    const parked = json(
      await call(mcp.client, 'eng_trigger_register', { trigger_type: 'nobody::provides', function_id: 'demo::echo', config: {} }),
    );
    expect(parked).toMatchObject({
      status: 'inactive',
      note: "trigger type 'nobody::provides' has no provider yet; the trigger waits for one",
    });
    await call(mcp.client, 'eng_trigger_unregister', { id: parked.id });
    const noConfig = await call(mcp.client, 'eng_trigger_register', { trigger_type: 'http', function_id: 'demo::echo' });
    expect(textOf(noConfig)).toMatch(/^Invalid arguments: .*config/);
  });
});

describe('eng_trigger_void / eng_trigger_enqueue', () => {
  it('fire and forget, and enqueue, for exposed functions only', async () => {
    expect(textOf(await call(mcp.client, 'eng_trigger_void', { function_id: 'rec::hit', payload: { n: 1 } }))).toBe(
      'Triggered (void): rec::hit',
    );
    await waitFor(() => hits.some((h) => (h as { n?: number }).n === 1));
    const receipt = json(await call(mcp.client, 'eng_trigger_enqueue', { function_id: 'rec__hit', payload: { n: 2 }, queue: 'default' }));
    expect(receipt.messageReceiptId).toEqual(expect.any(String));
    await waitFor(() => hits.some((h) => (h as { n?: number }).n === 2));

    // mcp.md §19: the reference let these reach hidden and internal functions
    expect(textOf(await call(mcp.client, 'eng_trigger_void', { function_id: 'demo::hidden', payload: {} }))).toContain(
      'not exposed via mcp.expose',
    );
    expect(textOf(await call(mcp.client, 'eng_trigger_enqueue', { function_id: 'engine::functions::list', payload: {} }))).toContain(
      'internal namespace',
    );
    expect(textOf(await call(mcp.client, 'eng_trigger_void', { function_id: '', payload: {} }))).toBe(
      'Missing required field: function_id',
    );
    expect(textOf(await call(mcp.client, 'eng_trigger_enqueue', { payload: {} }))).toBe('Missing required field: function_id');
    expect(textOf(await call(mcp.client, 'eng_trigger_void', { function_id: 'rec::hit', payload: 'text' }))).toMatch(
      /^Invalid arguments: .*payload/,
    );
  });

  it('a built-in called with arguments that are not an object is a -32602 protocol error', async () => {
    const err = await mcp.client
      .request(
        { method: 'tools/call', params: { name: 'eng_trigger_void', arguments: [1, 2] } } as never,
        (await import('@modelcontextprotocol/sdk/types.js')).CallToolResultSchema,
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
  });
});
