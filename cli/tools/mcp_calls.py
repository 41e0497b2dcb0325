"""One MCP tool call as a result: run a registry tool and turn its output, or any error, into an MCP
``CallToolResult`` (never raises). Shared by the server and its worker processes."""

from __future__ import annotations

import json
import logging
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ValidationError

from cli.tools.registry import ToolContext, run
from kg.errors import MabosError, one_line
from kg.models import describe_validation_error

logger = logging.getLogger("cli.tools.mcp_server")


def error_result(message: str) -> types.CallToolResult:
    """A tool error: ``isError`` and the one-line message, clipped as the CLI clips it (the model can read it and
    correct the call)."""
    return types.CallToolResult(content=[types.TextContent(text=one_line(message))], is_error=True)


def success_result(output: BaseModel) -> types.CallToolResult:
    """A tool's output as structured content plus its JSON text."""
    data = output.model_dump(mode="json")
    content: list[types.ContentBlock] = [types.TextContent(text=json.dumps(data, ensure_ascii=False))]
    if isinstance(data, dict):
        return types.CallToolResult(content=content, structured_content=data)
    return types.CallToolResult(content=content)


def call_tool(ctx: ToolContext, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run tool ``name`` in ``ctx`` and turn the outcome, or any error, into an MCP tool result (never raises)."""
    try:
        return success_result(run(ctx, name, arguments or {}))
    except MabosError as exc:
        return error_result(f"error: {exc}")
    except ValidationError as exc:  # a model built inside a handler refused its data
        return error_result(f"error: {describe_validation_error(exc)}")
    except Exception as exc:
        logger.exception("tool %s failed", name)
        return error_result(f"internal error: {type(exc).__name__}: {exc}")


__all__ = ["call_tool", "error_result", "success_result"]
