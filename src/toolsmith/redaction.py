"""Secret redaction: one place that decides what counts as a secret and blanks it out.

Everything toolsmith writes or shows (trajectories, ``--output`` files, event lines,
model error messages, tool records) passes through :class:`Redactor`. A secret is any
value of an environment variable whose name says key, token, secret, password or
credential, plus anything shaped like a common API key or bearer token. Strings are also
made encodable (lone surrogates replaced), so no write can fail on them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
_KEY_SHAPES = re.compile(
    r"(?i:bearer)\s+\S+|\bsk-[\w\-*.]{6,}|\b(sk_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|hf_[A-Za-z0-9]{30,}|glpat-[A-Za-z0-9_\-]{20,}"
    r"|AIza[0-9A-Za-z_\-]{35}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9\-]{10,})"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """``text`` with lone surrogates replaced (valid surrogate pairs are joined)."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class Redactor:
    """Replaces secret values (from the environment, and key-shaped strings) in any data."""

    def __init__(self, secrets: Iterable[str] = (), *, min_length: int = 6) -> None:
        # Short values of secret-named variables ("1", "true") would blank out ordinary text.
        self.secrets = sorted({s for s in secrets if s and len(s) >= min_length}, key=len, reverse=True)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> Redactor:
        env = os.environ if env is None else env
        return cls(value for name, value in env.items() if _SECRET_NAME.search(name))

    def text(self, value: str) -> str:
        value = encodable(value)
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return _KEY_SHAPES.sub(REDACTED, value)

    def contains_secret(self, value: str) -> bool:
        return self.text(value) != value

    def data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(str(k)): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value
