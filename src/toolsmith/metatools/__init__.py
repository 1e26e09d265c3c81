"""The five meta-tools the agent starts with: each module owns one tool and its schema.

:data:`META_TOOL_NAMES` is the one list of their names, in the order they are offered;
no stored tool may take one of them.
"""

META_TOOL_NAMES: tuple[str, ...] = ("web_search", "read_webpage", "code_interpreter", "create_tool", "search_tools")
