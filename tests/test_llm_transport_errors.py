"""ChatModel classifies transport failures by their types, whichever HTTP library the SDK uses.

The openai SDK wraps the errors of its HTTP library (httpx, or httpx2 in newer SDKs) in
``APIConnectionError`` / ``APITimeoutError`` with the original as ``__cause__``. Whether
the endpoint was reached, and whether a timeout may be retried, follows from that
cause's class in the library's hierarchy, subclasses included, never from its name.
"""

from __future__ import annotations

import contextlib
import importlib
from types import ModuleType, SimpleNamespace
from typing import Any

import httpx
import openai
import pytest

from toolsmith.config.providers import ProviderConfig
from toolsmith.errors import ModelConfigError, ModelRetryExhausted, ModelTimeoutError
from toolsmith.model import client as chat_client
from toolsmith.model.client import ChatModel
from toolsmith.model.retry import RetryPolicy

USER = [{"role": "user", "content": "hi"}]
URL = "http://127.0.0.1:9/v1"


def _libraries() -> list[ModuleType]:
    found = [httpx]
    with contextlib.suppress(ImportError):  # an SDK that sends with httpx only
        found.append(importlib.import_module("httpx2"))
    return found


LIBRARIES = [pytest.param(lib, id=lib.__name__) for lib in _libraries()]


class _Create:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc
        self.calls = 0

    def create(self, **_: Any) -> Any:
        self.calls += 1
        raise self.exc


def _model(exc: BaseException, *, attempts: int = 2) -> tuple[ChatModel, _Create, list[float]]:
    """A ChatModel whose every request fails with ``exc``, and the pauses it asks for."""
    slept: list[float] = []
    model = ChatModel(
        ProviderConfig("custom", "m", URL, "k", None),
        retry=RetryPolicy(max_attempts=attempts),
        stream=False,
        sleep=slept.append,
        clock=lambda: 0.0,
        rng=lambda: 0.0,
    )
    failing = _Create(exc)
    model._client = SimpleNamespace(  # type: ignore[assignment]
        base_url=URL, close=lambda: None, chat=SimpleNamespace(completions=SimpleNamespace(with_raw_response=failing))
    )
    return model, failing, slept


def _wrapped(wrapper: type[openai.APIConnectionError], cause: Exception, lib: ModuleType) -> Exception:
    request = lib.Request("POST", URL + "/chat/completions")
    if wrapper is openai.APITimeoutError:
        error: Exception = openai.APITimeoutError(request=request)
    else:
        error = openai.APIConnectionError(request=request)
    error.__cause__ = cause
    return error


@pytest.mark.parametrize("lib", LIBRARIES)
@pytest.mark.parametrize(
    ("name", "reached"),
    [("ConnectError", False), ("UnsupportedProtocol", False), ("LocalProtocolError", False),
     ("RemoteProtocolError", True), ("ReadError", True)],
)  # fmt: skip
def test_connection_failures_say_whether_the_endpoint_was_reached(lib: ModuleType, name: str, reached: bool) -> None:
    cause = getattr(lib, name)("boom")
    model, failing, slept = _model(_wrapped(openai.APIConnectionError, cause, lib))
    with pytest.raises(ModelRetryExhausted) as info:
        model.complete(USER, [])
    assert info.value.reached is reached
    assert failing.calls == 2 and len(slept) == 1  # retried once, then out of attempts


@pytest.mark.parametrize("lib", LIBRARIES)
def test_a_subclass_of_a_connect_error_is_classified_as_its_base(lib: ModuleType) -> None:
    class RefusedByProxy(lib.ConnectError):  # type: ignore[misc, name-defined]
        pass

    model, _, _ = _model(_wrapped(openai.APIConnectionError, RefusedByProxy("no"), lib))
    with pytest.raises(ModelRetryExhausted) as info:
        model.complete(USER, [])
    assert info.value.reached is False


@pytest.mark.parametrize("lib", LIBRARIES)
@pytest.mark.parametrize("name", ["ConnectTimeout", "PoolTimeout"])
def test_timeouts_before_the_request_went_out_are_retried(lib: ModuleType, name: str) -> None:
    model, failing, _ = _model(_wrapped(openai.APITimeoutError, getattr(lib, name)("slow"), lib))
    with pytest.raises(ModelRetryExhausted) as info:
        model.complete(USER, [])
    assert info.value.reached is False and failing.calls == 2


@pytest.mark.parametrize("lib", LIBRARIES)
@pytest.mark.parametrize("name", ["ReadTimeout", "WriteTimeout"])
def test_timeouts_after_the_request_went_out_are_not_retried(lib: ModuleType, name: str) -> None:
    model, failing, slept = _model(_wrapped(openai.APITimeoutError, getattr(lib, name)("slow"), lib))
    with pytest.raises(ModelTimeoutError) as info:
        model.complete(USER, [])
    assert info.value.setting == "model.timeout_s"
    assert failing.calls == 1 and slept == []


class _Body:
    def __init__(self, exc: Exception, request: Any) -> None:
        self.exc = exc
        self.request = request

    def read(self) -> bytes:
        raise self.exc


@pytest.mark.parametrize("lib", LIBRARIES)
@pytest.mark.parametrize(
    ("name", "wrapper"),
    [("ReadTimeout", openai.APITimeoutError), ("ReadError", openai.APIConnectionError),
     ("RemoteProtocolError", openai.APIConnectionError)],
)  # fmt: skip
def test_reading_a_plain_body_wraps_transport_errors_like_the_sdk(
    lib: ModuleType, name: str, wrapper: type[Exception]
) -> None:
    request = lib.Request("POST", URL)
    with pytest.raises(wrapper) as info:
        chat_client._read(_Body(getattr(lib, name)("cut"), request))
    assert type(info.value) is wrapper and isinstance(info.value.__cause__, getattr(lib, name))


def test_an_error_that_is_not_a_transport_error_is_not_wrapped() -> None:
    with pytest.raises(ZeroDivisionError):
        chat_client._read(_Body(ZeroDivisionError("a bug"), httpx.Request("POST", URL)))


def _refused_model(url: str, lib: ModuleType, refused: bool = True) -> tuple[ChatModel, _Create, list[float]]:
    """A ChatModel on ``url`` whose connections fail (refused, or for another reason), on an injected clock."""
    slept: list[float] = []
    model = ChatModel(
        ProviderConfig("custom", "m", url, "k", None, url_variable="LLM_BASE_URL"),
        retry=RetryPolicy(),  # the defaults: 300 s and 10 attempts
        stream=False,
        sleep=slept.append,
        clock=lambda: sum(slept),
        rng=lambda: 1.0,
    )
    low = ConnectionRefusedError(111, "Connection refused") if refused else OSError(-2, "Name or service not known")
    cause = lib.ConnectError(str(low))
    cause.__context__ = low
    failing = _Create(_wrapped(openai.APIConnectionError, cause, lib))
    model._client = SimpleNamespace(  # type: ignore[assignment]
        base_url=url, close=lambda: None, chat=SimpleNamespace(completions=SimpleNamespace(with_raw_response=failing))
    )
    return model, failing, slept


@pytest.mark.parametrize("lib", LIBRARIES)
@pytest.mark.parametrize("url", ["http://127.0.0.1:11434/v1", "http://localhost:8000/v1", "http://[::1]:1234/v1"])
def test_a_refused_connection_on_loopback_fails_within_seconds_with_the_doctor_hint(lib: ModuleType, url: str) -> None:
    model, failing, slept = _refused_model(url, lib)
    with pytest.raises(ModelConfigError) as info:
        model.complete(USER, [])
    assert sum(slept) <= chat_client.LOOPBACK_REFUSED_S  # waited on the injected clock, not the 300 s budget
    assert failing.calls < 10
    message = str(info.value)
    assert message.startswith(f"Nothing is listening at {url}") and "`toolsmith doctor`" in message
    assert info.value.setting == "LLM_BASE_URL"


@pytest.mark.parametrize("lib", LIBRARIES)
def test_a_refused_connection_elsewhere_is_retried_within_the_budget(
    lib: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chat_client, "check_endpoint_allowed", lambda url: None)  # the fake client sends nothing
    model, _, slept = _refused_model("http://10.1.2.3:8000/v1", lib)  # a server on the network may come back
    with pytest.raises(ModelRetryExhausted) as info:
        model.complete(USER, [])
    assert info.value.reached is False and sum(slept) > chat_client.LOOPBACK_REFUSED_S


@pytest.mark.parametrize("lib", LIBRARIES)
def test_another_connection_failure_on_loopback_keeps_its_retries(lib: ModuleType) -> None:
    model, _, slept = _refused_model("http://localhost:8000/v1", lib, refused=False)
    with pytest.raises(ModelRetryExhausted):
        model.complete(USER, [])
    assert sum(slept) > chat_client.LOOPBACK_REFUSED_S


@pytest.mark.slow
def test_run_against_a_closed_local_port_stops_with_the_doctor_hint(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    from toolsmith import cli

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens here once the probe closes
    for name, value in {
        "TOOLSMITH_HOME": str(tmp_path), "LLM_BASE_URL": f"http://127.0.0.1:{port}/v1", "LLM_MODEL": "m",
        "TOOLSMITH_PRE_RETRIEVAL": "false",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("LLM_PROVIDER", raising=False)
    assert cli.run(["run", "hello"]) == 2  # the user must start the server or fix the URL
    err = capsys.readouterr().err
    assert err.startswith(f"error: Nothing is listening at http://127.0.0.1:{port}/v1") and "`toolsmith doctor`" in err
