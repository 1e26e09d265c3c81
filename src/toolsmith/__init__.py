"""toolsmith: an agent that builds, verifies, stores and reuses its own tools."""

__version__ = "0.1.0"
