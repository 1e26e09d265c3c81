"""Test doubles for the model, shipped with the package so that users' tests can use them.

* :class:`ScriptedModel` plays back a script of replies (or callables computing a reply
  from the transcript) and records what it was asked;
* :class:`ScriptedServer` serves any model as a real OpenAI-compatible endpoint on
  loopback (streamed when asked), with injectable faults, so the real client runs end to
  end over real HTTP; :func:`completion_payload` and :func:`stream_chunks` are the bodies
  it sends;
* :func:`tool_call`, :func:`reply`, :func:`final`, :func:`last_tool_result` and
  :func:`last_user_text` build scripts and read transcripts.
"""

from toolsmith.model import estimate_tokens  # the rule ScriptedModel counts tokens by
from toolsmith.testing.scripted import (
    ScriptedModel,
    ScriptItem,
    final,
    last_tool_result,
    last_user_text,
    reply,
    tool_call,
)
from toolsmith.testing.server import Fault, ScriptedServer, completion_payload, stream_chunks, transcript_problem

__all__ = [
    "Fault",
    "ScriptItem",
    "ScriptedModel",
    "ScriptedServer",
    "completion_payload",
    "estimate_tokens",
    "final",
    "last_tool_result",
    "last_user_text",
    "reply",
    "stream_chunks",
    "tool_call",
    "transcript_problem",
]
