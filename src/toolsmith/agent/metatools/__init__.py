"""The five meta-tools the agent starts with: each module owns one tool, its schema and
its handler. Their names, in the order they are offered, are
:data:`toolsmith.calls.META_TOOL_NAMES`.
"""
