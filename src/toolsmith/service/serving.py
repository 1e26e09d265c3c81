"""Which version of a tool a caller gets: the served one, or exactly the one it pinned.

A caller outside an agent task (``toolsmith tools call``, an exported skill's script, a
cron job) names a tool as ``NAME`` (whatever version is served now) or ``NAME@N`` (that
version and no other). Only a served (active) version is callable. A pinned version that
is pending, quarantined or retired is refused with a message naming its state, why, and
the version served now, so a skill pinned to a version that broke says what to do
instead of quietly running other code.
"""

from __future__ import annotations

from toolsmith.errors import VersionNotServedError
from toolsmith.library import Status, ToolLibrary, ToolVersion
from toolsmith.service.rollback import last_rollback


def callable_version(library: ToolLibrary, name: str, version: int | None = None) -> ToolVersion:
    """The version a call of ``name`` (``@version``, if pinned) runs.

    Raises :class:`~toolsmith.errors.ToolNotFoundError` for an unknown tool or version and
    :class:`~toolsmith.errors.VersionNotServedError` for one that is not served.
    """
    tool = library.get(name, version)
    if tool.status is Status.ACTIVE:
        return tool
    served = library.served(name)
    raise VersionNotServedError(
        _why_not(library, tool, served),
        name=name,
        version=tool.version,
        status=tool.status.value,
        served=served.version if served is not None else None,
    )


def _why_not(library: ToolLibrary, tool: ToolVersion, served: ToolVersion | None) -> str:
    why = f" ({tool.status_reason})" if tool.status_reason else ""
    text = f"{tool.ref} is {tool.status.value}{why} and cannot be called"
    if served is None:
        return f"{text}; no version of {tool.name} is served now."
    rolled = last_rollback(library, tool.name)
    how = " (served again by an automatic rollback)" if rolled is not None else ""
    return f"{text}; the version served now is {served.ref}{how}: call {served.ref} or {tool.name}."
