/**
 * The orders demo (examples/orders) over MCP: its receipt answers with MCP content that eng-mcp
 * passes through (text, a resource link, the order embedded), and the order is an MCP resource
 * template served by a function (`orders://order/{id}`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type EngineProcess, REPO_ROOT, TSX_IMPORT, waitFor } from '../../../test/harness.ts';
import { type StdioMcp, startMcpEngine, stdioMcp } from './helpers.ts';

let engine: EngineProcess;
let orders: ChildProcess;
let mcp: StdioMcp;

beforeAll(async () => {
  // state for the orders, pub/sub for its event; the rest of what it touches is best effort
  engine = await startMcpEngine(
    '  - name: eng-state\n    config:\n      adapter: { name: kv, config: { store_method: in_memory } }\n  - name: eng-pubsub\n',
  );
  orders = spawn(process.execPath, ['--import', TSX_IMPORT, join(REPO_ROOT, 'examples/orders/src/main.ts')], {
    env: { ...process.env, ENG_URL: engine.busUrl, ENG_WORKER_NAME: 'orders' },
    stdio: 'ignore',
  });
  mcp = await stdioMcp(engine);
  await waitFor(async () => (await mcp.client.listTools()).tools.some((t) => t.name === 'orders__receipt'), 20_000);
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  orders?.kill('SIGTERM');
  await engine?.stop();
});

it('a receipt is MCP content, and the order it links to is a resource read through the template', async () => {
  const created = await mcp.client.callTool({ name: 'orders__create', arguments: { sku: 'SKU-7', qty: 2, customer: 'ada' } });
  expect(created.isError, JSON.stringify(created)).toBe(false);
  const order = created.structuredContent as { id: string; sku: string; status: string };
  expect(order).toMatchObject({ sku: 'SKU-7', id: expect.stringMatching(/^ord_/) });

  const receipt = await mcp.client.callTool({ name: 'orders__receipt', arguments: { id: order.id } });
  expect(receipt.isError).toBe(false);
  const content = receipt.content as Array<{ type: string; [key: string]: unknown }>;
  expect(content.map((c) => c.type)).toEqual(['text', 'resource_link', 'resource']);
  expect(content[0]?.text).toMatch(new RegExp(`^Receipt ${order.id}: 2 × SKU-7 for ada`));
  const uri = `orders://order/${order.id}`;
  expect(content[1]).toEqual({ type: 'resource_link', uri, name: `order ${order.id}`, mimeType: 'application/json' });
  const embedded = (content[2] as unknown as { resource: { uri: string; mimeType: string; text: string } }).resource;
  expect(embedded).toMatchObject({ uri, mimeType: 'application/json' });
  expect(JSON.parse(embedded.text)).toMatchObject({ id: order.id, sku: 'SKU-7', qty: 2 });

  const { resourceTemplates } = await mcp.client.listResourceTemplates();
  expect(resourceTemplates).toContainEqual({
    uriTemplate: 'orders://order/{id}',
    name: 'order',
    description: 'One order as an MCP resource',
    mimeType: 'application/json',
  });
  const read = await mcp.client.readResource({ uri });
  expect(read.contents).toHaveLength(1);
  expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ id: order.id, customer: 'ada' });
  const missing = await mcp.client.callTool({ name: 'orders__receipt', arguments: { id: 'ord_nope' } });
  expect(missing.isError).toBe(true);
  expect((missing.content as Array<{ text: string }>)[0]?.text).toContain('order ord_nope not found');
});
