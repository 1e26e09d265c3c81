"""The model: provider-neutral types and protocol, and the clients that implement it.

* :mod:`~toolsmith.model.types`: :class:`ChatMessage` and :class:`ToolSchema` (what a model
  is sent), :class:`ModelReply`, :class:`ToolCallRequest`,
  :class:`Usage` (estimated from characters when an endpoint reports none) and the
  :class:`Model` protocol (no SDK import);
* :mod:`~toolsmith.model.completion`: a response body or chat completion read into a
  ModelReply, anything else refused as one clear error;
* :mod:`~toolsmith.model.stream`: a streamed completion assembled, with progress;
* :mod:`~toolsmith.model.nesting`: the bound on how deeply model JSON may nest;
* :mod:`~toolsmith.model.retry`: the retry policy (stops on time) and ``Retry-After``;
* :mod:`~toolsmith.model.ban`: the real-model ban tests rely on;
* :mod:`~toolsmith.model.client`: :class:`ChatModel`, the OpenAI-compatible client (the
  only module here that imports the ``openai`` SDK; import it from there).

Importing this package loads no SDK.
"""

from toolsmith.model.types import (
    ChatMessage,
    MessageToolCall,
    Model,
    ModelReply,
    ToolCallRequest,
    ToolSchema,
    Usage,
    compute_cost,
    estimate_tokens,
    estimate_usage,
    with_usage_estimated,
)

__all__ = [
    "ChatMessage",
    "MessageToolCall",
    "Model",
    "ModelReply",
    "ToolCallRequest",
    "ToolSchema",
    "Usage",
    "compute_cost",
    "estimate_tokens",
    "estimate_usage",
    "with_usage_estimated",
]
