/** A bare WebSocket worker for protocol tests: sends raw frames, waits for frames by predicate. */
import WebSocket from 'ws';

export interface RawFrame {
  type: string;
  [key: string]: unknown;
}

export class RawClient {
  readonly frames: RawFrame[] = [];
  private waiters: Array<{ match: (f: RawFrame) => boolean; resolve: (f: RawFrame) => void }> = [];
  closeInfo?: { code: number; reason: string };
  private closed: Promise<void>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      let frame: RawFrame;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return;
      }
      this.frames.push(frame);
      for (const waiter of [...this.waiters]) {
        if (waiter.match(frame)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          waiter.resolve(frame);
        }
      }
    });
    this.closed = new Promise((resolve) =>
      socket.on('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        resolve();
      }),
    );
  }

  static async connect(url: string, options?: WebSocket.ClientOptions): Promise<RawClient> {
    const socket = new WebSocket(url, options);
    const client = new RawClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  /** Connect and wait for `workerregistered`. */
  static async worker(url: string): Promise<RawClient & { workerId: string; token: string }> {
    const client = await RawClient.connect(url);
    const registered = await client.next((f) => f.type === 'workerregistered');
    return Object.assign(client, { workerId: registered.worker_id as string, token: registered.reattach_token as string });
  }

  send(frame: object | string): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** The first frame (already received or future) matching `match`; the default wait is long because a
   * loaded CI machine can take seconds, and tests that expect no frame pass their own short timeout. */
  next(match: (f: RawFrame) => boolean, timeoutMs = 15_000): Promise<RawFrame> {
    const existing = this.frames.find(match);
    if (existing) {
      this.frames.splice(this.frames.indexOf(existing), 1);
      return Promise.resolve(existing);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`no matching frame within ${timeoutMs} ms; received: ${JSON.stringify(this.frames).slice(0, 2000)}`));
      }, timeoutMs);
      const done = (f: RawFrame) => {
        clearTimeout(timer);
        this.frames.splice(this.frames.indexOf(f), 1);
        resolve(f);
      };
      this.waiters.push({ match, resolve: done });
    });
  }

  /** Invoke a function and wait for its result frame. */
  /** `timeoutMs`: how long to wait for the result (large payloads on a loaded machine take seconds). */
  async call(functionId: string, data: unknown = {}, extra: Record<string, unknown> = {}, timeoutMs = 15_000): Promise<RawFrame> {
    const invocationId = crypto.randomUUID();
    this.send({ type: 'invokefunction', invocation_id: invocationId, function_id: functionId, data, ...extra });
    return this.next((f) => f.type === 'invocationresult' && f.invocation_id === invocationId, timeoutMs);
  }

  /** Invoke and return `result`, throwing on an error result. */
  async result<T = any>(functionId: string, data: unknown = {}): Promise<T> {
    const frame = await this.call(functionId, data);
    if (frame.error) throw Object.assign(new Error((frame.error as { message: string }).message), frame.error);
    return frame.result as T;
  }

  /** Register this connection as a visible worker (with a pid) like the SDKs do. */
  registerWorker(name: string, pid = process.pid): void {
    this.send({
      type: 'invokefunction',
      function_id: 'engine::workers::register',
      data: { runtime: 'node', version: 'raw', name, os: 'test', pid },
      action: { type: 'void' },
    });
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    this.socket.close();
    return this.closed;
  }
  terminate(): Promise<void> {
    this.socket.terminate();
    return this.closed;
  }
  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }
  waitClosed(): Promise<void> {
    return this.closed;
  }
}
