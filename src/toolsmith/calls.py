"""The protocol of one tool call, shared by everything that makes, judges or shows one.

:data:`META_TOOL_NAMES` is the one list of the meta-tools' names, in the order they are
offered; no stored tool may take one of them.
"""

from __future__ import annotations

META_TOOL_NAMES: tuple[str, ...] = ("web_search", "read_webpage", "code_interpreter", "create_tool", "search_tools")
