"""A minimal eng worker for Python, standard library only.

eng-mcp copies this file next to the worker it generates (eng_worker_register with
language=python). It speaks the engine's worker protocol (engine-protocol §2) over a WebSocket it
implements itself (RFC 6455 client side): workerregistered -> registerfunction, invokefunction ->
invocationresult, JSON ping -> pong, and it reconnects with backoff when the engine goes away.
"""

import asyncio
import base64
import inspect
import json
import os
import platform
import socket
import struct
import sys
import traceback
import urllib.parse
import uuid

__all__ = ["EngWorker"]


class _Closed(Exception):
    pass


class _Socket:
    """Client end of a WebSocket on an asyncio stream (text frames, ping/pong, close)."""

    def __init__(self, reader, writer):
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()

    @classmethod
    async def connect(cls, url):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("ws",):
            raise ValueError("only ws:// URLs are supported, got %r" % url)
        host = parts.hostname or "127.0.0.1"
        port = parts.port or 80
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        reader, writer = await asyncio.open_connection(host, port)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, port, key)
        )
        writer.write(request.encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status + b" ":
            writer.close()
            raise ConnectionError("engine refused the WebSocket upgrade: %s" % status.decode(errors="replace"))
        return cls(reader, writer)

    async def send_text(self, text):
        await self._send(0x1, text.encode("utf-8"))

    async def _send(self, opcode, payload):
        header = bytearray([0x80 | opcode])
        length = len(payload)
        if length < 126:
            header.append(0x80 | length)
        elif length < 65536:
            header.append(0x80 | 126)
            header += struct.pack("!H", length)
        else:
            header.append(0x80 | 127)
            header += struct.pack("!Q", length)
        mask = os.urandom(4)
        header += mask
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload)) if length < 4096 else _mask_fast(payload, mask)
        async with self._lock:
            self._writer.write(bytes(header) + masked)
            await self._writer.drain()

    async def receive(self):
        """The next text (or binary) message as str/bytes; answers pings; raises _Closed at the end."""
        message = bytearray()
        message_opcode = None
        while True:
            first, second = await self._reader.readexactly(2)
            fin = first & 0x80
            opcode = first & 0x0F
            length = second & 0x7F
            if length == 126:
                (length,) = struct.unpack("!H", await self._reader.readexactly(2))
            elif length == 127:
                (length,) = struct.unpack("!Q", await self._reader.readexactly(8))
            mask = await self._reader.readexactly(4) if second & 0x80 else None
            payload = await self._reader.readexactly(length) if length else b""
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if opcode == 0x8:
                try:
                    await self._send(0x8, payload[:2])
                except Exception:
                    pass
                raise _Closed()
            if opcode == 0x9:
                await self._send(0xA, payload)
                continue
            if opcode == 0xA:
                continue
            if opcode in (0x1, 0x2):
                message_opcode = opcode
                message = bytearray(payload)
            elif opcode == 0x0:
                message += payload
            if fin and message_opcode is not None:
                data = bytes(message)
                return data.decode("utf-8") if message_opcode == 0x1 else data

    def close(self):
        try:
            self._writer.close()
        except Exception:
            pass


def _mask_fast(payload, mask):
    n = len(payload)
    key = (mask * (n // 4 + 1))[:n]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(key, "big")).to_bytes(n, "big")


class EngWorker:
    """register_function(id, handler, description=None, metadata=None); call(function_id, payload); run_forever()."""

    def __init__(self, url=None, name=None):
        self.url = url or os.environ.get("ENG_URL") or "ws://127.0.0.1:49134"
        self.name = name or os.environ.get("ENG_WORKER_NAME") or "%s:%d" % (socket.gethostname(), os.getpid())
        self._functions = {}
        self._socket = None
        self._pending = {}
        self._parent = os.getppid()

    def register_function(self, function_id, handler, description=None, metadata=None, request_format=None, response_format=None):
        if not callable(handler):
            raise TypeError("handler of %s is not callable" % function_id)
        message = {"type": "registerfunction", "id": function_id}
        if description is not None:
            message["description"] = description
        if metadata is not None:
            message["metadata"] = metadata
        if request_format is not None:
            message["request_format"] = request_format
        if response_format is not None:
            message["response_format"] = response_format
        self._functions[function_id] = (message, handler)

    async def call(self, function_id, payload=None, timeout=30):
        """Invoke another function and wait for its result (raises RuntimeError on an error result)."""
        if self._socket is None:
            raise RuntimeError("not connected to the engine")
        invocation_id = str(uuid.uuid4())
        future = asyncio.get_running_loop().create_future()
        self._pending[invocation_id] = future
        await self._socket.send_text(json.dumps({
            "type": "invokefunction", "invocation_id": invocation_id, "function_id": function_id, "data": payload,
        }))
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(invocation_id, None)

    def run_forever(self):
        try:
            asyncio.run(self._main())
        except KeyboardInterrupt:
            pass

    async def _main(self):
        delay = 0.1
        asyncio.get_running_loop().create_task(self._watch_parent())
        while True:
            try:
                self._socket = await _Socket.connect(self.url)
                delay = 0.1
                await self._serve(self._socket)
            except (OSError, ConnectionError, asyncio.IncompleteReadError, asyncio.TimeoutError, _Closed) as err:
                print("eng worker: connection to %s lost (%s); reconnecting" % (self.url, err), file=sys.stderr)
            finally:
                if self._socket is not None:
                    self._socket.close()
                self._socket = None
                for future in self._pending.values():
                    if not future.done():
                        future.set_exception(RuntimeError("connection to the engine lost"))
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5)

    async def _watch_parent(self):
        # a worker spawned by eng-mcp ends with it, even when eng-mcp is killed outright
        while True:
            await asyncio.sleep(1)
            if os.environ.get("ENG_MCP_PARENT_PID") and os.getppid() != self._parent:
                os._exit(0)

    async def _serve(self, sock):
        while True:
            text = await sock.receive()
            if isinstance(text, bytes):
                text = text.decode("utf-8", errors="replace")
            try:
                message = json.loads(text)
            except ValueError:
                continue
            kind = message.get("type")
            if kind == "workerregistered":
                for registration, _handler in self._functions.values():
                    await sock.send_text(json.dumps(registration))
                await sock.send_text(json.dumps({
                    "type": "invokefunction", "function_id": "engine::workers::register", "action": {"type": "void"},
                    "data": {"runtime": "python", "version": platform.python_version(), "name": self.name,
                             "os": "%s %s" % (platform.system().lower(), platform.release()), "pid": os.getpid()},
                }))
            elif kind == "invokefunction":
                asyncio.get_running_loop().create_task(self._execute(sock, message))
            elif kind == "invocationresult":
                future = self._pending.get(message.get("invocation_id"))
                if future is not None and not future.done():
                    if message.get("error"):
                        error = message["error"]
                        future.set_exception(RuntimeError("%s: %s" % (error.get("code"), error.get("message"))))
                    else:
                        future.set_result(message.get("result"))
            elif kind == "ping":
                await sock.send_text('{"type":"pong"}')

    async def _execute(self, sock, message):
        function_id = message.get("function_id")
        reply = {"type": "invocationresult", "invocation_id": message.get("invocation_id"), "function_id": function_id}
        entry = self._functions.get(function_id)
        try:
            if entry is None:
                raise LookupError("Function %s not found" % function_id)
            handler = entry[1]
            data = message.get("data")
            takes_context = len(inspect.signature(handler).parameters) >= 2
            result = handler(data, message.get("metadata")) if takes_context else handler(data)
            if inspect.isawaitable(result):
                result = await result
            reply["result"] = result
        except Exception as err:  # the caller hears about every failure
            code = "function_not_found" if entry is None else "invocation_failed"
            reply["error"] = {"code": code, "message": str(err) or err.__class__.__name__, "stacktrace": traceback.format_exc()}
        if not message.get("invocation_id"):
            return
        try:
            text = json.dumps(reply)
        except (TypeError, ValueError) as err:
            text = json.dumps({**{k: reply[k] for k in ("type", "invocation_id", "function_id")},
                               "error": {"code": "serialization_error", "message": "result of %s is not JSON: %s" % (function_id, err)}})
        try:
            await sock.send_text(text)
        except Exception:
            pass
