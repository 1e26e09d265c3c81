"""A pinned distribution: the record of one package a tool needs at run time."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from toolsmith.calls import JSONObject, JSONValue


@dataclass(frozen=True)
class Requirement:
    """One pinned distribution a tool needs at run time."""

    name: str
    version: str
    sha256: str | None = None

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"

    def to_dict(self) -> JSONObject:
        return {"name": self.name, "version": self.version, "sha256": self.sha256}

    @classmethod
    def from_dict(cls, data: Mapping[str, JSONValue]) -> Requirement:
        sha256 = data.get("sha256")
        digest = sha256 if isinstance(sha256, str) else None
        return cls(name=str(data["name"]), version=str(data["version"]), sha256=digest)
