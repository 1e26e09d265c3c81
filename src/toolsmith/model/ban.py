"""The real-model ban: tests never reach a real model.

:func:`ban_real_models` (switched on for every test by ``tests/conftest.py``) makes the
client refuse any endpoint that is not on loopback, before any network I/O.
``TOOLSMITH_ALLOW_REAL_MODEL=1`` lifts the ban on purpose; ``TOOLSMITH_BAN_REAL_MODEL=1``
imposes it on child processes that cannot see the switch.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from toolsmith.config.providers import is_loopback_url
from toolsmith.errors import ModelError

REAL_MODELS_ALLOWED = True
ALLOW_ENV = "TOOLSMITH_ALLOW_REAL_MODEL"
BAN_ENV = "TOOLSMITH_BAN_REAL_MODEL"


def ban_real_models() -> None:
    """From now on the client refuses every endpoint that is not on loopback."""
    global REAL_MODELS_ALLOWED
    REAL_MODELS_ALLOWED = False


def allow_real_models() -> None:
    global REAL_MODELS_ALLOWED
    REAL_MODELS_ALLOWED = True


def real_models_allowed(env: Mapping[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    if env.get(ALLOW_ENV, "").strip() == "1":
        return True
    if env.get(BAN_ENV, "").strip() == "1":
        return False
    return REAL_MODELS_ALLOWED


def check_endpoint_allowed(base_url: str) -> None:
    """Raise :class:`ModelError` when real models are banned and ``base_url`` is not local."""
    if is_loopback_url(base_url) or real_models_allowed():
        return
    raise ModelError(
        f"Real model calls are banned in this process (tests): refusing to contact {base_url}. "
        f"Point the model at a toolsmith.testing.ScriptedServer, or set {ALLOW_ENV}=1 to "
        f"lift the ban on purpose."
    )
