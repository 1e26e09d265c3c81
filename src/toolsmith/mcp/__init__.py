"""Serving the library over the Model Context Protocol (``toolsmith mcp``).

:mod:`~toolsmith.mcp.server` maps the active tools to MCP tools and calls them through
:mod:`toolsmith.service.toolcall`; :mod:`~toolsmith.mcp.auth` is the HTTP transport's
bearer-token check.
"""
