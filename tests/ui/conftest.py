"""Fixtures for the web UI tests: a library built by the scripted agent, and a client."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import ui_library
from starlette.testclient import TestClient

from toolsmith.config import Settings
from toolsmith.ui import create_app

TOKEN, BASE = ui_library.TOKEN, ui_library.BASE


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """One agent-built library per test module (building takes a few seconds)."""
    return ui_library.build(tmp_path_factory.mktemp("ui-home"))


@pytest.fixture()
def client(built: Settings) -> Iterator[TestClient]:
    """A client that has not logged in."""
    with TestClient(create_app(built, TOKEN), base_url=BASE, follow_redirects=False) as test_client:
        yield test_client


@pytest.fixture()
def authed(client: TestClient) -> TestClient:
    """The same client, logged in through the ``?token=`` link (so it holds the cookie)."""
    response = client.get(f"/?token={TOKEN}")
    assert response.status_code == 303 and response.headers["location"] == "/"
    return client


def home_of(settings: Settings) -> Path:
    return settings.home
