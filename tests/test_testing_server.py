"""ScriptedServer over raw HTTP: routes, the completion format, faults and shutdown."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from toolsmith.errors import ConfigError
from toolsmith.model import ModelReply, Usage
from toolsmith.testing import ScriptedModel, ScriptedServer, final, reply, tool_call

CHAT = {"model": "scripted", "messages": [{"role": "user", "content": "hi"}]}


def test_models_and_unknown_routes() -> None:
    with ScriptedServer(ScriptedModel(name="my-model")) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        listing = httpx.get(f"{server.base_url}/models").json()
        assert [m["id"] for m in listing["data"]] == ["my-model"]
        assert httpx.get(f"{server.base_url}/nope").status_code == 404
        assert httpx.post(f"{server.base_url}/embeddings", json={}).status_code == 404
        assert server.request_count == 0  # only chat requests count


def test_completion_json_has_tool_calls_and_usage() -> None:
    scripted = ScriptedModel(
        [
            ModelReply(
                content=None,
                tool_calls=(tool_call("t", {"x": 1}, id="c9"),),
                usage=Usage(3, 4, 7, 0.5),
            )
        ]
    )
    with ScriptedServer(scripted) as server:
        body = httpx.post(
            f"{server.base_url}/chat/completions", json=CHAT, headers={"Authorization": "Bearer k"}
        ).json()
    assert body["object"] == "chat.completion"
    choice = body["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["tool_calls"] == [
        {"id": "c9", "type": "function", "function": {"name": "t", "arguments": '{"x": 1}'}}
    ]
    assert body["usage"] == {
        "prompt_tokens": 3,
        "completion_tokens": 4,
        "total_tokens": 7,
        "cost": 0.5,
    }
    assert server.authorizations == ["Bearer k"]
    assert server.requests == [CHAT]


def test_bad_requests_are_400() -> None:
    with ScriptedServer(ScriptedModel([final("unused")])) as server:
        url = f"{server.base_url}/chat/completions"
        assert httpx.post(url, content=b"{not json").status_code == 400
        assert httpx.post(url, json={"model": "m"}).status_code == 400
        assert server.authorizations == [None, None]
        assert server.requests[0] == "{not json" and server.request_count == 2


def test_streams_when_asked_and_can_refuse_or_ignore_streaming() -> None:
    body = {**CHAT, "stream": True, "stream_options": {"include_usage": True}}
    with ScriptedServer(ScriptedModel([final("a streamed answer")]), chunk_chars=4) as server:
        streamed = httpx.post(f"{server.base_url}/chat/completions", json=body)
    assert streamed.headers["content-type"] == "text/event-stream"
    events = [line.removeprefix("data: ") for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "a streamed answer" and len(chunks) > 5
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    with ScriptedServer(ScriptedModel([final("x")]), streaming="refuse") as server:
        refused = httpx.post(f"{server.base_url}/chat/completions", json=body)
    assert refused.status_code == 400 and "stream" in refused.json()["error"]["message"]
    with ScriptedServer(ScriptedModel([final("plain")]), streaming="ignore") as server:
        ignored = httpx.post(f"{server.base_url}/chat/completions", json=body)
    assert ignored.json()["choices"][0]["message"]["content"] == "plain"


class Pauses:
    """Stands in for the server's ``wait``: records each pause asked for and takes none."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def __call__(self, stop: threading.Event, seconds: float) -> bool:
        self.asked.append(seconds)
        return stop.is_set()


def test_faults_play_in_order_before_answers() -> None:
    pauses = Pauses()
    with ScriptedServer(ScriptedModel([final("real"), final("slow")]), wait=pauses) as server:
        url = f"{server.base_url}/chat/completions"
        server.inject(status=429, retry_after=1.5).inject(body="plain text").inject(delay=0.2)
        assert server.faults_pending == 3
        limited = httpx.post(url, json=CHAT)
        assert (limited.status_code, limited.headers["retry-after"]) == (429, "1.5")
        raw = httpx.post(url, json=CHAT)
        assert (raw.status_code, raw.text) == (200, "plain text")
        assert pauses.asked == []
        assert httpx.post(url, json=CHAT).json()["choices"][0]["message"]["content"] == "real"
        assert pauses.asked == [0.2]  # the delay paused before the real answer
        assert server.faults_pending == 0
        assert httpx.post(url, json=CHAT).json()["choices"][0]["message"]["content"] == "slow"
        assert pauses.asked == [0.2]


def test_drop_and_hang_close_without_answering() -> None:
    pauses = Pauses()
    with ScriptedServer(ScriptedModel(), wait=pauses) as server:
        url = f"{server.base_url}/chat/completions"
        server.inject(drop=True).inject(hang=30)
        for _ in range(2):
            with pytest.raises(httpx.RemoteProtocolError):
                httpx.post(url, json=CHAT, timeout=5)
    assert pauses.asked == [30]  # the hang was asked for, then the connection closed unanswered


def test_close_releases_a_hanging_request() -> None:
    ended: list[tuple[float, bool]] = []
    done = threading.Event()

    def wait(stop: threading.Event, seconds: float) -> bool:
        released = stop.wait(seconds)  # the real pause, on the server's own stop event
        ended.append((seconds, released))
        done.set()
        return released

    server = ScriptedServer(ScriptedModel(), wait=wait).start()
    server.inject(hang=600)
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.base_url}/chat/completions", json=CHAT, timeout=0.2)
    assert ended == []  # the client gave up; the handler still hangs
    server.close()
    assert done.wait(120), "close() did not end the hang"  # a bound on waiting, far below the hang's 600 s
    assert ended == [(600, True)]  # ended by the server's stop, not by the hang running out


def test_model_errors_are_recorded_and_answered_400() -> None:
    def explode(messages: object, tools: object) -> ModelReply:
        raise RuntimeError("script bug")

    with ScriptedServer(ScriptedModel([explode])) as server:  # type: ignore[list-item]
        answer = httpx.post(f"{server.base_url}/chat/completions", json=CHAT)
    assert answer.status_code == 400 and "script bug" in answer.json()["error"]["message"]
    assert isinstance(server.errors[0], RuntimeError)


def test_misuse_is_refused() -> None:
    with pytest.raises(ConfigError):
        ScriptedServer(ScriptedModel(), host="0.0.0.0")
    server = ScriptedServer(ScriptedModel())
    with pytest.raises(ConfigError):
        _ = server.base_url  # not started
    with pytest.raises(ConfigError):
        server.inject()


def test_ipv6_loopback() -> None:
    try:
        server = ScriptedServer(ScriptedModel([reply(content="six")]), host="::1").start()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    with server:
        assert server.base_url.startswith("http://[::1]:")
        assert (
            httpx.post(f"{server.base_url}/chat/completions", json=CHAT).json()["choices"][0]["message"]["content"]
            == "six"
        )
