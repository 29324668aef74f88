"""The official Python MCP SDK's high-level client (mcp 2.3.0) against eng-mcp: every capability once.

Usage: sdk_client.py <stdio|http> <auto|legacy|2026-07-28> <url | command args...>
Prints one JSON object with what the server answered (python-client.test.ts checks it).
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters, types


async def main() -> None:
    transport, mode, target = sys.argv[1], sys.argv[2], sys.argv[3:]
    server = (
        target[0]
        if transport == "http"
        else StdioServerParameters(command=target[0], args=target[1:], env={**os.environ, "ENG_WORKER_CONFIG": ""})
    )
    logs: list[object] = []

    async def sampling(_ctx, params):  # noqa: ANN001
        text = getattr(params.messages[0].content, "text", "")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=f"echo: {text}"), model="test-model", stop_reason="endTurn"
        )

    async def elicitation(_ctx, _params):  # noqa: ANN001
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com", "name": "Ada"})

    async def roots(_ctx):  # noqa: ANN001
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.data)

    out: dict[str, object] = {}
    async with Client(
        server,
        mode=mode,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
        logging_callback=logged,
        log_level="info",
        cache=None,
    ) as client:
        out["version"] = client.protocol_version
        out["tools"] = [t.name for t in (await client.list_tools()).tools]
        out["simple"] = (await client.call_tool("test_simple_text", {})).content[0].text
        progress: list[float] = []

        async def on_progress(value: float, _total: float | None, _message: str | None) -> None:
            progress.append(value)

        await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        out["progress"] = progress
        if mode == "legacy":
            await client.set_logging_level("info")
        await client.call_tool("test_tool_with_logging", {})
        await asyncio.sleep(0.2)
        out["logs"] = logs
        out["sampling"] = (await client.call_tool("test_sampling", {"prompt": "hello"})).content[0].text
        out["elicitation"] = (await client.call_tool("test_elicitation", {"message": "who?"})).content[0].text
        out["roots"] = (await client.call_tool("test_input_required_result_list_roots", {})).content[0].text
        out["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
        out["read"] = (await client.read_resource("test://static-text")).contents[0].text
        out["templates"] = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        out["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
        rendered = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        out["prompt"] = rendered.messages[0].content.text
        completion = await client.complete(types.PromptReference(type="ref/prompt", name="register-function"), {"name": "language", "value": "n"})
        out["completion"] = completion.completion.values
    print(json.dumps(out))


asyncio.run(main())
