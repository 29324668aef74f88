import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RawClient } from '../test/raw-client.ts';
import { startStack } from './fixtures/stack.ts';
import { test as base, expect, gotoPage } from './fixtures/test.ts';

// issue 17 item 4: HTTP-invoked functions (engine-protocol §3.4) in Functions: the URL and method
// instead of a worker, and Invoke like any other function.

const test = base.extend({
  stack: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright fixture signature
    async ({}, use) => {
      const stack = await startStack({
        extraEngineYaml: [
          '  - name: eng-http-functions',
          '    config:',
          '      security: { url_allowlist: ["127.0.0.1"], block_private_ips: false, require_https: false }',
          '',
        ].join('\n'),
      });
      await use(stack);
      await stack.stop();
    },
    { scope: 'worker', timeout: 90_000 },
  ],
});

test.describe('HTTP-invoked functions in the console', () => {
  let server: Server;
  const received: unknown[] = [];
  let owner: RawClient;

  test.beforeAll(async ({ stack }) => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
      received.push({ method: req.method, path: req.url, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ quote: 42.5, currency: 'EUR', for: body?.sku ?? null }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    owner = await RawClient.worker(stack.engine.busUrl);
    owner.registerWorker('pricing-registrar');
    owner.send({
      type: 'registerfunction',
      id: 'pricing::quote',
      description: 'Price quote from the pricing service',
      invocation: { url: `http://127.0.0.1:${port}/quote?api_key=s3cret`, method: 'POST', timeout_ms: 4000 },
    });
  });
  test.afterAll(async () => {
    await owner?.close();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  test('lists the function with its method and redacted URL instead of a worker, and invokes it', async ({ page, consoleUrl }) => {
    const port = (server.address() as AddressInfo).port;
    const shown = `POST http://127.0.0.1:${port}/quote?api_key=***`;
    await gotoPage(page, consoleUrl, '/functions');
    const row = page.locator('[data-function-id="pricing::quote"]');
    await expect(row).toBeVisible();
    await expect(row).toContainText(shown);
    await expect(row).toContainText('HTTP');
    await expect(row).not.toContainText('pricing-registrar');
    await expect(page.locator('body')).not.toContainText('s3cret');

    await row.click();
    const detail = page.getByTestId('function-detail');
    await expect(detail).toContainText('HTTP function');
    await expect(detail.getByTestId('http-endpoint')).toContainText(`http://127.0.0.1:${port}/quote?api_key=***`);
    await expect(detail.getByTestId('http-endpoint')).toContainText('timeout 4000 ms');
    await expect(detail).not.toContainText('worker:');

    const editor = detail.getByRole('textbox', { name: 'Input for pricing::quote' });
    await editor.fill('{"sku": "E2E-HTTP", "qty": 2}');
    await detail.getByRole('button', { name: 'Invoke' }).click();
    const result = page.getByTestId('invoke-result');
    await expect(result).toHaveAttribute('data-ok', 'true');
    await expect(result).toContainText('"quote": 42.5');
    await expect(result).toContainText('"for": "E2E-HTTP"');
    expect(received).toContainEqual({ method: 'POST', path: '/quote?api_key=s3cret', body: { sku: 'E2E-HTTP', qty: 2 } });
  });
});
