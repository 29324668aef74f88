import { randomUUID } from 'node:crypto';
import { type DecodeResult, decodeMessage, type ErrorBody, ErrorCode, type InvokeFunction, type Message } from '@eng/protocol';
import type { WebSocket } from 'ws';
import type { Core } from '../core/core.ts';
import type { InvokeOutcome, Settle } from '../core/invoker.ts';
import { jsonTooDeep, MAX_FRAME_DEPTH, tooDeepMessage, topLevelStrings } from '../core/json-limits.ts';
import type { WorkerPeer } from '../core/workers.ts';
import type { Logger } from '../log.ts';
import type { BusSession } from './rbac.ts';

/** Receives binary telemetry frames (§8.1); provided by the observability module. */
export type TelemetrySink = (prefix: 'OTLP' | 'MTRC' | 'LOGS', payload: Buffer, workerId: string | null) => void;

const TELEMETRY_PREFIXES = new Set(['OTLP', 'MTRC', 'LOGS']);

export function telemetryPrefix(data: Buffer): 'OTLP' | 'MTRC' | 'LOGS' | null {
  if (data.length < 4) return null;
  const prefix = data.toString('latin1', 0, 4);
  return TELEMETRY_PREFIXES.has(prefix) ? (prefix as 'OTLP' | 'MTRC' | 'LOGS') : null;
}

/** What the bus accepts in one frame beyond its size (ws enforces `max_frame_bytes`). */
export interface FrameLimits {
  /** `max_frame_depth`: deepest nesting of arrays/objects in a text frame. */
  maxDepth: number;
}

/** One worker connected to the bus (path `/`). */
export class WorkerConnection implements WorkerPeer {
  readonly id = randomUUID();
  readonly connectedAtMs = Date.now();
  private closed = false;
  private corked = false;
  private turnOpen = false;
  private cleanup?: Promise<void>;
  private resolveCleanup?: () => void;
  /** Set on a bus with `rbac` or `middleware_function_id` (bus/rbac.ts): every frame passes it first. */
  session?: BusSession;

  constructor(
    private readonly socket: WebSocket,
    readonly ipAddress: string | null,
    private readonly core: Core,
    private readonly log: Logger,
    private readonly telemetry: () => TelemetrySink | undefined,
    private readonly limits: FrameLimits = { maxDepth: MAX_FRAME_DEPTH },
  ) {}

  start(): void {
    const entry = this.core.connectWorker(this);
    // spec §2.1: `workerregistered` goes out before any frame from the worker is read
    this.send({ type: 'workerregistered', worker_id: this.id, reattach_token: entry.reattachToken });
    this.socket.on('message', (data, isBinary) => this.onFrame(data as Buffer, isBinary));
    this.socket.on('close', () => this.onClose());
    this.socket.on('error', (err) => {
      this.log.debug(`worker ${this.id} socket error`, { error: err.message });
    });
  }

  /**
   * Send a frame: an object (serialised here), JSON text, or the UTF-8 bytes of JSON text relayed
   * as received. Throws when an object cannot be serialised (nested too deep for the stack, a
   * BigInt): callers that carry foreign data catch it and answer with an error.
   */
  send(frame: object | string | Buffer): boolean {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return false;
    if (this.session) frame = this.session.outgoing(frame);
    // serialised before anything is corked, so a throw leaves the socket as it was
    const text = typeof frame === 'string' || Buffer.isBuffer(frame) ? frame : JSON.stringify(frame);
    this.batchFrames();
    if (typeof text === 'string') this.socket.send(text);
    else this.socket.send(text, { binary: false });
    return true;
  }

  /**
   * The first frame of an event-loop turn leaves at once; later ones are corked and leave together
   * in the check phase. One syscall per frame was the largest cost of the HTTP trigger path under
   * load (bench/http), while a lone frame keeps its latency.
   */
  private batchFrames(): void {
    if (!this.turnOpen) {
      this.turnOpen = true;
      setImmediate(() => {
        this.turnOpen = false;
        if (this.corked) {
          this.corked = false;
          this.rawSocket()?.uncork();
        }
      });
      return;
    }
    if (this.corked) return;
    const raw = this.rawSocket();
    if (!raw) return;
    this.corked = true;
    raw.cork();
  }

  private rawSocket(): import('node:net').Socket | undefined {
    return (this.socket as unknown as { _socket?: import('node:net').Socket })._socket;
  }

  evict(reason: string): Promise<void> {
    if (!this.cleanup) {
      this.cleanup = new Promise((resolve) => {
        this.resolveCleanup = resolve;
      });
    }
    if (this.closed) return Promise.resolve();
    this.socket.close(4000, reason);
    // a peer that never answers the close handshake still gets cleaned up
    setTimeout(() => this.socket.terminate(), 1000).unref();
    return this.cleanup;
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.core.disconnectWorker(this.id);
    this.resolveCleanup?.();
  }

  private onFrame(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      const prefix = telemetryPrefix(data);
      if (prefix) {
        const sink = this.telemetry();
        if (sink) sink(prefix, data.subarray(4), this.id);
        return;
      }
    }
    // measured before parsing: a deep value would overflow the stack wherever it is written out again
    if (jsonTooDeep(data, this.limits.maxDepth)) {
      this.refuseDeep(data);
      return;
    }
    const text = data.toString('utf8');
    const decoded: DecodeResult | undefined = decodeMessage(text);
    if (!decoded) return;
    if (!decoded.ok) {
      this.log.warn(`dropped frame from worker ${this.id}: ${decoded.reason}`);
      return;
    }
    try {
      if (this.session) this.session.receive(decoded.message, data);
      else this.handle(decoded.message, data);
    } catch (err) {
      this.log.error(`failed to handle ${decoded.message.type} from worker ${this.id}`, { error: (err as Error).message });
    }
  }

  /**
   * A frame nested deeper than `max_frame_depth`: never parsed. Whoever waits on it gets an error
   * (the caller of an invocation, the caller an executor's result was for, a registering worker);
   * anything else is dropped with a log line.
   */
  private refuseDeep(raw: Buffer): void {
    const fields = topLevelStrings(raw, ['type', 'invocation_id', 'function_id', 'id', 'trigger_type']);
    const type = fields.type ?? '(unknown)';
    const message = tooDeepMessage(`"${type}" frame`, this.limits.maxDepth, 'max_frame_depth of eng-worker-manager');
    const error: ErrorBody = { code: ErrorCode.JsonTooDeep, message };
    this.log.warn(`refused a frame from worker ${this.id}: ${message}`, {
      type,
      ...(fields.function_id ? { function_id: fields.function_id } : {}),
      ...(fields.id ? { id: fields.id } : {}),
    });
    const invocationId = fields.invocation_id;
    switch (type) {
      case 'invokefunction':
        if (invocationId) this.sendResult(invocationId, fields.function_id ?? '', { ok: false, error });
        return;
      case 'invocationresult':
        // the caller waits for this result: it gets the refusal instead
        if (invocationId) this.core.invoker.complete(invocationId, { ok: false, error }, this.id);
        return;
      case 'registerfunction':
        if (fields.id) this.rejectRegistration(error, { function_id: fields.id });
        return;
      case 'registertriggertype':
        if (fields.id) this.rejectRegistration(error, { trigger_type: fields.id });
        return;
      case 'registertrigger':
        if (fields.id) {
          this.send({
            type: 'triggerregistrationresult',
            id: fields.id,
            trigger_type: fields.trigger_type ?? '',
            function_id: fields.function_id ?? '',
            error,
          });
        }
        return;
    }
  }

  /** A frame the RBAC session let through (maybe rewritten), handled as an open bus does. */
  process(message: Message, raw: Buffer): void {
    try {
      this.handle(message, raw);
    } catch (err) {
      this.log.error(`failed to handle ${message.type} from worker ${this.id}`, { error: (err as Error).message });
    }
  }

  private handle(message: Message, raw: Buffer): void {
    const core = this.core;
    switch (message.type) {
      case 'invokefunction':
        this.onInvoke(message);
        return;
      case 'invocationresult': {
        const rawFrame = { frame: raw, invocationId: message.invocation_id };
        const outcome = message.error
          ? { ok: false as const, error: message.error, rawFrame }
          : {
              ok: true as const,
              result: message.result,
              traceparent: message.traceparent ?? undefined,
              baggage: message.baggage ?? undefined,
              rawFrame,
            };
        // only the connection the call was sent to may answer it (anyone can read pending ids in traces)
        core.invoker.complete(message.invocation_id, outcome, this.id);
        return;
      }
      case 'cancelinvocation':
        // eng's frame (protocol messages.ts): only a call this connection made, and still waits on
        if (!core.invoker.cancel(message.invocation_id, this.id, message.reason ?? undefined)) {
          this.log.debug(`cancel from worker ${this.id} ignored: no call of its own under that id`, {
            invocation_id: message.invocation_id,
          });
        }
        return;
      case 'registerfunction': {
        const entry = {
          id: message.id,
          description: message.description ?? null,
          requestFormat: message.request_format ?? null,
          responseFormat: message.response_format ?? null,
          metadata: message.metadata ?? null,
          ownerWorkerId: this.id,
          moduleName: null,
          registeredAtMs: Date.now(),
        };
        if (message.invocation) {
          // spec §3.4: an HTTP-invoked function (eng-http-functions checks the URL, then serves it)
          const invocation = message.invocation;
          void core.registerHttpFunction({ ...entry, invocation }).then((registered) => {
            if (!registered.ok) this.rejectRegistration(registered.error, { function_id: message.id });
          });
          return;
        }
        const registered = core.registerWorkerFunction(entry);
        if (!registered.ok) this.rejectRegistration(registered.error, { function_id: message.id });
        return;
      }
      case 'unregisterfunction':
        core.functions.removeIfOwner(message.id, this.id);
        return;
      case 'registertriggertype': {
        const registered = core.registerTriggerType({
          id: message.id,
          description: message.description ?? null,
          triggerRequestFormat: message.trigger_request_format,
          callRequestFormat: message.call_request_format,
          provider: { kind: 'worker', workerId: this.id },
        });
        if (!registered.ok) this.rejectRegistration(registered.error, { trigger_type: message.id });
        return;
      }
      case 'unregistertriggertype':
        core.unregisterTriggerType(message.id, this.id);
        return;
      case 'registertrigger':
        void core
          .bindTrigger({
            id: message.id,
            triggerType: message.trigger_type,
            functionId: message.function_id,
            config: message.config ?? {},
            metadata: message.metadata ?? undefined,
            ownerWorkerId: this.id,
          })
          .then((result) => {
            if (!result.ok) {
              this.log.warn(`trigger ${message.id} (${message.trigger_type}) refused: ${result.error.message}`);
              this.send({
                type: 'triggerregistrationresult',
                id: message.id,
                trigger_type: message.trigger_type,
                function_id: message.function_id,
                error: result.error,
              });
            }
          })
          .catch((err: Error) => this.log.error(`trigger ${message.id} (${message.trigger_type}) failed to bind: ${err.message}`));
        return;
      case 'triggerregistrationresult':
        core.handleTriggerResult(this.id, message.id, message.error);
        return;
      case 'unregistertrigger': {
        const binding = core.bindings.get(message.id);
        // only the owner (or anyone, for ownerless bindings) may remove a binding
        if (binding && (binding.ownerWorkerId === this.id || binding.ownerWorkerId === null)) {
          void core.unbindTrigger(message.id);
        }
        return;
      }
      case 'reattach':
        void core.reattach(this.id, message.previous_worker_id, message.reattach_token);
        return;
      case 'registerservice':
        // spec §2.3.11: a grouping record only; accepted and ignored
        return;
      case 'ping':
        this.send({ type: 'pong' });
        return;
      case 'pong':
        return;
      default:
        this.log.warn(`dropped frame from worker ${this.id}: "${message.type}" is not sent by workers`);
    }
  }

  /**
   * `registerfunction` and `registertriggertype` have no reply; a refusal is told with HEAD iii's
   * `registrationrejected` frame (@eng/sdk raises it as an error; iii SDKs ignore it, the engine log has it).
   */
  private rejectRegistration(error: ErrorBody, subject: { function_id: string } | { trigger_type: string }): void {
    this.send({ type: 'registrationrejected', code: error.code, message: error.message, ...subject });
  }

  private onInvoke(message: InvokeFunction): void {
    const invocationId = message.invocation_id ?? undefined;
    // void calls, and calls without an id, get no reply (§2.5 step 5)
    const noReply = message.action?.type === 'void' || !invocationId;
    this.core.invoker.dispatch(
      message.function_id,
      message.data,
      {
        invocationId,
        callerWorkerId: this.id,
        traceparent: message.traceparent ?? undefined,
        baggage: message.baggage ?? undefined,
        metadata: message.metadata,
        action: message.action,
        // parsed from this frame: nobody else holds it
        payloadOwned: true,
      },
      noReply ? NO_REPLY : new BusReply(this, invocationId, message.function_id),
    );
  }

  /** The outcome of a call this worker made. */
  sendResult(invocationId: string, functionId: string, outcome: InvokeOutcome): void {
    // the executor's own frame carries the same invocation id: relay it untouched
    if (outcome.rawFrame && outcome.rawFrame.invocationId === invocationId) {
      this.send(outcome.rawFrame.frame);
      return;
    }
    // a result that is JSON text already (a stored state value): written into the frame as it is
    if (outcome.ok && outcome.resultJson !== undefined) {
      let text = `{"type":"invocationresult","invocation_id":${JSON.stringify(invocationId)},"function_id":${JSON.stringify(functionId)},"result":${outcome.resultJson}`;
      if (outcome.traceparent) text += `,"traceparent":${JSON.stringify(outcome.traceparent)}`;
      if (outcome.baggage) text += `,"baggage":${JSON.stringify(outcome.baggage)}`;
      if (!this.send(`${text}}`)) this.log.debug(`result for ${functionId} dropped: caller ${this.id} is gone`);
      return;
    }
    const reply: Record<string, unknown> = {
      type: 'invocationresult',
      invocation_id: invocationId,
      function_id: functionId,
    };
    if (outcome.ok) {
      if (outcome.result !== undefined) reply.result = outcome.result;
      if (outcome.traceparent) reply.traceparent = outcome.traceparent;
      if (outcome.baggage) reply.baggage = outcome.baggage;
    } else {
      reply.error = outcome.error;
    }
    let sent: boolean;
    try {
      sent = this.send(reply);
    } catch (err) {
      // a result the engine cannot write out (an in-process module's value nested too deep): the
      // caller still gets an answer, an error saying why
      const message = `the result of ${functionId} could not be sent back: ${(err as Error).message}`;
      this.log.warn(`${message} (caller ${this.id})`);
      sent = this.send({
        type: 'invocationresult',
        invocation_id: invocationId,
        function_id: functionId,
        error: { code: ErrorCode.SerializationError, message },
      });
    }
    if (!sent) {
      this.log.debug(`result for ${functionId} dropped: caller ${this.id} is gone`);
    }
  }
}

/** Where a bus call's outcome goes: back to the calling connection, under the caller's invocation id. */
class BusReply implements Settle {
  readonly takesJson = true;
  constructor(
    private readonly connection: WorkerConnection,
    private readonly invocationId: string,
    private readonly functionId: string,
  ) {}
  settle(outcome: InvokeOutcome): void {
    this.connection.sendResult(this.invocationId, this.functionId, outcome);
  }
}

const NO_REPLY: Settle = { settle() {} };
