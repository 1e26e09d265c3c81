"""Shared pytest setup. Keep this file small; add only what every test needs.

Tests never call a real model. The autouse fixture below bans every model endpoint that
is not on loopback (a toolsmith.testing.ScriptedServer is), in this process through the
module switch and in child processes (CLI runs) through TOOLSMITH_BAN_REAL_MODEL.
Setting TOOLSMITH_ALLOW_REAL_MODEL=1 in the shell lifts the ban on purpose. Every test also
gets its own TOOLSMITH_HOME, so the developer's real library is never touched.
"""

from __future__ import annotations

import pytest

from toolsmith.model import ban


@pytest.fixture(autouse=True)
def _ban_real_models(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ban, "REAL_MODELS_ALLOWED", False)
    monkeypatch.setenv(ban.BAN_ENV, "1")


@pytest.fixture(autouse=True)
def _private_toolsmith_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may read or write the developer's real library, config or trajectories."""
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path_factory.mktemp("toolsmith-home")))
    monkeypatch.delenv("TOOLSMITH_CONFIG", raising=False)
    monkeypatch.delenv("TOOLSMITH_LIBRARY_URL", raising=False)
