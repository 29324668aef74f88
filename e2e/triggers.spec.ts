import { expect, gotoPage, test } from './fixtures/test.ts';

// seed 2.3 and 4.1 ops 2-4: the trigger list and its test tools, with side effects checked in the engine

test.describe('Triggers page', () => {
  test('groups triggers by kind with counts, filter tabs and status', async ({ page, consoleUrl }) => {
    await gotoPage(page, consoleUrl, '/triggers');
    await expect(page.getByTestId('trigger-group-http')).toContainText('3');
    await expect(page.getByTestId('trigger-group-http')).toContainText('GET /orders/:id');
    await expect(page.getByTestId('trigger-group-cron')).toContainText('*/30 * * * * *');
    await expect(page.getByTestId('trigger-group-cron')).toContainText('Every 30 seconds');
    await expect(page.getByTestId('trigger-group-event')).toContainText('order.created');
    await expect(page.getByTestId('trigger-group-queue')).toContainText('fulfilment');
    await expect(page.getByTestId('trigger-group-state')).toContainText('scope orders');
    await expect(page.getByTestId('trigger-group-http')).toContainText('Active');
    await page.getByRole('tab', { name: /Cron/ }).click();
    await expect(page.getByTestId('trigger-group-http')).toHaveCount(0);
    await expect(page.getByTestId('trigger-group-cron')).toBeVisible();
    await expect(page).toHaveURL(/type=cron/);
  });

  test('Test HTTP trigger sends the request and shows status, headers and body', async ({ page, consoleUrl, engineClient }) => {
    await gotoPage(page, consoleUrl, '/triggers?type=http');
    await page.locator('[data-trigger-id]', { hasText: 'POST /orders' }).click();
    const panel = page.getByTestId('http-test-panel');
    await expect(panel.getByRole('combobox', { name: 'HTTP method' })).toHaveValue('POST');
    await expect(page.getByTestId('http-test-path')).toHaveText('/orders');
    await panel.getByRole('textbox', { name: 'Request body' }).fill('{"sku": "E2E-HTTP", "qty": 2, "customer": "http-test"}');
    await panel.getByRole('button', { name: 'Send request' }).click();
    const response = page.getByTestId('http-test-response');
    await expect(page.getByTestId('http-test-status')).toHaveText('201');
    await expect(response).toContainText('"sku": "E2E-HTTP"');
    const id = /"id": "(ord_[a-z0-9]+)"/.exec((await response.textContent()) ?? '')?.[1] as string;
    expect(id).toBeTruthy();
    await response.getByRole('tab', { name: /Headers/ }).click();
    await expect(page.getByTestId('http-test-headers')).toContainText('content-type');
    await expect(page.getByTestId('http-test-headers')).toContainText('application/json');
    expect(await engineClient.call('state::get', { scope: 'orders', key: id })).toMatchObject({ sku: 'E2E-HTTP', customer: 'http-test' });

    // a path parameter and a query pair, on the GET route
    await page.locator('[data-trigger-id]', { hasText: 'GET /orders/:id' }).click();
    const get = page.getByTestId('http-test-panel');
    await expect(get.getByRole('button', { name: 'Send request' })).toBeDisabled();
    await get.getByRole('textbox', { name: 'Path parameter id' }).fill(id);
    await get.getByRole('textbox', { name: 'Query key 1' }).fill('verbose');
    await get.getByRole('textbox', { name: 'Query value 1' }).fill('1');
    await expect(page.getByTestId('http-test-path')).toHaveText(`/orders/${id}`);
    await get.getByRole('button', { name: 'Send request' }).click();
    await expect(page.getByTestId('http-test-status')).toHaveText('200');
    await expect(page.getByTestId('http-test-response')).toContainText(`/orders/${id}?verbose=1`);
    await expect(page.getByTestId('http-test-response')).toContainText('"customer": "http-test"');
  });

  test('Trigger Now runs the cron function, which writes reports/latest', async ({ page, consoleUrl, engineClient }) => {
    await gotoPage(page, consoleUrl, '/triggers?type=cron');
    await page.locator('[data-trigger-id]', { hasText: '*/30 * * * * *' }).click();
    const panel = page.getByTestId('cron-panel');
    await expect(page.getByTestId('cron-expression')).toHaveText('*/30 * * * * *');
    await expect(page.getByTestId('cron-next-runs').locator('li')).toHaveCount(5);
    // stay clear of the schedule's own firings (every :00 and :30): at least 8 s to the next one
    await expect
      .poll(
        () => {
          const s = new Date().getSeconds() % 30;
          return s >= 1 && s <= 22;
        },
        { timeout: 30_000, intervals: [250] },
      )
      .toBe(true);
    await engineClient.call('state::delete', { scope: 'reports', key: 'latest' });
    const clicked = Date.now();
    await panel.getByRole('button', { name: 'Trigger now' }).click();
    await expect(page.getByTestId('cron-fired')).toContainText('"manual": true');
    await expect
      .poll(
        async () => (await engineClient.call<{ at: string } | undefined>('state::get', { scope: 'reports', key: 'latest' }))?.at ?? null,
        { timeout: 6000 },
      )
      .not.toBeNull();
    const latest = (await engineClient.call<{ at: string; total: number }>('state::get', { scope: 'reports', key: 'latest' })) as {
      at: string;
      total: number;
    };
    expect(Date.parse(latest.at)).toBeGreaterThanOrEqual(clicked - 1000);
    expect(Date.now() - clicked).toBeLessThan(8000); // before the next scheduled firing could have written it
    expect(typeof latest.total).toBe('number');
  });

  test('Emit publishes the event and a subscriber receives it', async ({ page, consoleUrl, stack }) => {
    const { connect } = await import('@eng/sdk');
    const subscriber = connect(stack.engine.busUrl, { name: 'e2e-subscriber' });
    const received: unknown[] = [];
    subscriber.registerFunction('e2e::on_ping', (data) => {
      received.push(data);
      return null;
    });
    subscriber.registerTrigger({ type: 'subscribe', function_id: 'e2e::on_ping', config: { topic: 'e2e.ping' } });
    await subscriber.ready();
    try {
      await gotoPage(page, consoleUrl, '/triggers?type=event');
      await page.locator('[data-trigger-id]', { hasText: 'e2e.ping' }).click();
      const panel = page.getByTestId('emit-panel');
      await expect(panel.getByRole('textbox', { name: 'Event topic' })).toHaveValue('e2e.ping');
      await panel.getByRole('textbox', { name: 'Event payload' }).fill('{"hello": "from the console", "n": 7}');
      await panel.getByRole('button', { name: 'Emit' }).click();
      await expect(page.getByTestId('emit-result')).toContainText('Published to e2e.ping');
      await expect.poll(() => received.length, { timeout: 5000 }).toBe(1);
      // the subscriber gets the payload exactly as typed: the engine keeps the publisher beside the
      // message, never inside the data (issue 26 item 3, as iii delivers it)
      expect(received[0]).toEqual({ hello: 'from the console', n: 7 });
    } finally {
      await subscriber.close();
    }
  });

  test('a trigger refused by its provider shows Error with the reason; one of a type nobody provides shows Inactive', async ({
    page,
    consoleUrl,
    stack,
    engineClient,
  }) => {
    const { connect } = await import('@eng/sdk');
    const tag = Date.now().toString(36);
    // a worker providing a trigger type that refuses bindings without a secret
    const provider = connect(stack.engine.busUrl, { name: 'e2e-picky-provider' });
    provider.registerTriggerType(
      { id: `e2e-webhook-${tag}`, description: 'signed webhooks' },
      {
        registerTrigger: (binding) => {
          if (!(binding.config as { secret?: string } | undefined)?.secret) throw new Error('signing secret missing');
        },
        unregisterTrigger: () => undefined,
      },
    );
    await provider.ready();
    const binder = connect(stack.engine.busUrl, { name: 'e2e-binder' });
    binder.registerFunction(`e2e::refused_${tag}`, () => null);
    binder.registerFunction(`e2e::accepted_${tag}`, () => null);
    binder.registerFunction(`e2e::parked_${tag}`, () => null);
    binder.registerTrigger({ type: `e2e-webhook-${tag}`, function_id: `e2e::refused_${tag}`, config: { path: 'no-secret' } });
    binder.registerTrigger({ type: `e2e-webhook-${tag}`, function_id: `e2e::accepted_${tag}`, config: { secret: 's3cret' } });
    binder.registerTrigger({ type: `e2e-nobody-${tag}`, function_id: `e2e::parked_${tag}`, config: { anything: 1 } });
    await binder.ready();
    try {
      // what the engine says (engine::registered-triggers::list), then what the page shows
      const status = async (fn: string) =>
        (
          await engineClient.call<{ registered_triggers: Array<{ function_id: string; status: string; error?: string }> }>(
            'engine::registered-triggers::list',
            { function_id: fn },
          )
        ).registered_triggers[0];
      await expect.poll(async () => (await status(`e2e::refused_${tag}`))?.status).toBe('error');
      expect((await status(`e2e::refused_${tag}`))?.error).toContain('signing secret missing');
      expect((await status(`e2e::accepted_${tag}`))?.status).toBe('active');
      expect((await status(`e2e::parked_${tag}`))?.status).toBe('inactive');

      await gotoPage(page, consoleUrl, '/triggers?type=other');
      const row = (fn: string) => page.locator('[data-trigger-id]', { hasText: fn });
      await expect(row(`e2e::refused_${tag}`)).toContainText('Error');
      await expect(row(`e2e::accepted_${tag}`)).toContainText('Active');
      await expect(row(`e2e::parked_${tag}`)).toContainText('Inactive');
      await expect(row(`e2e::parked_${tag}`)).not.toContainText('Active');

      // the detail of the refused one says why
      await row(`e2e::refused_${tag}`).click();
      const detail = page.getByTestId('trigger-detail');
      await expect(detail.getByRole('alert')).toContainText("The trigger type's provider refused this binding");
      await expect(detail.getByRole('alert')).toContainText('signing secret missing');
      // the parked one says that nobody serves its type
      await row(`e2e::parked_${tag}`).click();
      await expect(detail).toContainText(`e2e-nobody-${tag}`);
      await expect(detail.getByRole('status')).toContainText(`No worker provides the trigger type e2e-nobody-${tag}`);

      // the provider leaves: its bindings go Inactive on the page, live
      await provider.close();
      await expect(row(`e2e::accepted_${tag}`)).toContainText('Inactive', { timeout: 10_000 });
      await expect(row(`e2e::refused_${tag}`)).toContainText('Inactive');
    } finally {
      await binder.close();
      await provider.close();
    }
  });

  test('an HTTP trigger whose function left with its worker is Inactive with the reason, and the route fails', async ({
    page,
    consoleUrl,
    stack,
    engineClient,
  }) => {
    const { connect } = await import('@eng/sdk');
    const tag = Date.now().toString(36);
    const owner = connect(stack.engine.busUrl, { name: 'e2e-owner' });
    owner.registerFunction(`e2e::gone_${tag}`, () => ({ ok: true }));
    await owner.ready();
    // another worker binds the route, so the binding outlives the function's worker
    const binder = connect(stack.engine.busUrl, { name: 'e2e-route-binder' });
    binder.registerTrigger({ type: 'http', function_id: `e2e::gone_${tag}`, config: { api_path: `gone-${tag}`, http_method: 'GET' } });
    await binder.ready();
    try {
      await gotoPage(page, consoleUrl, '/triggers?type=http');
      const row = page.locator('[data-trigger-id]', { hasText: `e2e::gone_${tag}` });
      await expect(row).toContainText('Active');
      await expect(row).not.toContainText('no function');

      await owner.close();
      // the route stays bound (its binder is alive), but nothing serves it: Inactive, with the reason
      // (once the engine has seen the owner go)
      const listed = () =>
        engineClient
          .call<{ registered_triggers: Array<{ status: string; error?: string }> }>('engine::registered-triggers::list', {
            function_id: `e2e::gone_${tag}`,
          })
          .then((r) => r.registered_triggers);
      await expect.poll(async () => (await listed()).map((t) => t.status)).toEqual(['inactive']);
      expect((await listed())[0]?.error).toContain('is not registered');
      const res = await fetch(`http://127.0.0.1:${stack.engine.ports.HTTP}/gone-${tag}`);
      expect(res.status).toBe(500);
      expect(await res.text()).toContain('function_not_found');

      await expect(row).toContainText('no function', { timeout: 10_000 });
      await expect(row).toContainText('Inactive');
      await row.click();
      const detail = page.getByTestId('trigger-detail');
      await expect(detail.getByRole('alert')).toContainText('The function this trigger calls is not registered');
      await expect(detail.getByRole('alert')).toContainText(`e2e::gone_${tag}`);
      // the HTTP test shows the failure the route answers
      await detail.getByRole('button', { name: 'Send request' }).click();
      await expect(page.getByTestId('http-test-status')).toHaveText('500');
      await expect(page.getByTestId('http-test-response')).toContainText('function_not_found');
    } finally {
      await binder.close();
      await owner.close();
    }
  });
  test('a route bound again by a later worker shows the earlier binding as Shadowed, and it takes the route back', async ({
    page,
    consoleUrl,
    stack,
  }) => {
    const { connect } = await import('@eng/sdk');
    const tag = Date.now().toString(36);
    const path = `shared-${tag}`;
    const bindRoute = async (name: string) => {
      const worker = connect(stack.engine.busUrl, { name: `e2e-${name}` });
      worker.registerFunction(`e2e::${name}_${tag}`, () => ({ body: { served_by: name } }));
      worker.registerTrigger({ type: 'http', function_id: `e2e::${name}_${tag}`, config: { api_path: path, http_method: 'GET' } });
      await worker.ready();
      return worker;
    };
    const servedBy = async () => {
      const res = await fetch(`http://127.0.0.1:${stack.engine.ports.HTTP}/${path}`);
      return res.status === 200 ? ((await res.json()) as { served_by: string }).served_by : res.status;
    };
    const first = await bindRoute('first');
    const second = await bindRoute('second');
    try {
      await expect.poll(servedBy).toBe('second');
      await gotoPage(page, consoleUrl, '/triggers?type=http');
      const firstRow = page.locator('[data-trigger-id]', { hasText: `e2e::first_${tag}` });
      const secondRow = page.locator('[data-trigger-id]', { hasText: `e2e::second_${tag}` });
      await expect(firstRow).toContainText('Shadowed');
      await expect(secondRow).toContainText('Active');
      await firstRow.click();
      const detail = page.getByTestId('trigger-detail');
      await expect(detail).toContainText('Shadowed: another binding serves this route');
      await expect(detail.getByTestId('trigger-inactive-reason')).toContainText(`GET ${path} is served by trigger`);

      await second.close();
      await expect.poll(servedBy, { timeout: 10_000 }).toBe('first');
      await expect(firstRow).toContainText('Active', { timeout: 10_000 });
      await expect(secondRow).toHaveCount(0);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
