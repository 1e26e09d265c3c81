"""What every front end (the agent, MCP, the CLI, the web UI) does with a stored tool.

:mod:`~toolsmith.service.toolcall` is the one door for calling a stored tool (arguments,
the sandboxed run, health, quarantine); :mod:`~toolsmith.service.review` changes a tool's
status (approve, reject, quarantine, re-admit, retire) with its audit record, and re-runs
a tool's tests.
"""
