"""Benchmark: what streaming costs the model client, against the plain request as baseline.

A scripted model behind a real local OpenAI-compatible endpoint answers through the real
SDK, once with ``stream=False`` (the baseline) and once streamed, for a short answer and for
a long one cut into many chunks. Printed per answer size: median wall time of each mode and
the streamed/plain ratio, measured in the same run.

    python bench/model.py [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import time

from toolsmith.config.providers import ProviderConfig
from toolsmith.model.client import ChatModel
from toolsmith.testing import ScriptedModel, ScriptedServer, final

USER = [{"role": "user", "content": "Say something."}]
SIZES = {"short (40 chars)": 40, "long (16,000 chars)": 16_000}


def median_s(server: ScriptedServer, scripted: ScriptedModel, *, stream: bool, chars: int, repeats: int) -> float:
    config = ProviderConfig("custom", "bench", server.base_url, "bench", None)
    timings: list[float] = []
    with ChatModel(config, timeout=30.0, stream=stream) as model:
        for _ in range(repeats + 1):  # the first call warms the connection up and is dropped
            scripted.add(final("x" * chars))
            started = time.perf_counter()
            reply = model.complete(USER, [])
            timings.append(time.perf_counter() - started)
            assert len(reply.content or "") == chars
    return statistics.median(timings[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    scripted = ScriptedModel(name="bench")
    print(f"{'answer':<22}{'plain (baseline)':>18}{'streamed':>12}{'ratio':>8}   chunks")
    with ScriptedServer(scripted, chunk_chars=16) as server:
        for label, chars in SIZES.items():
            plain = median_s(server, scripted, stream=False, chars=chars, repeats=args.repeats)
            streamed = median_s(server, scripted, stream=True, chars=chars, repeats=args.repeats)
            chunks = -(-chars // 16) + 2
            print(f"{label:<22}{plain * 1000:>15.1f} ms{streamed * 1000:>9.1f} ms{streamed / plain:>7.2f}x   {chunks}")


if __name__ == "__main__":
    main()
