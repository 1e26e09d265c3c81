"""When to try a model request again, and how long to wait first.

:class:`RetryPolicy` bounds retries in attempts and in wall time; :func:`parse_retry_after`
reads the provider's own request to wait (``retry-after-ms`` or ``Retry-After``).
"""

from __future__ import annotations

import email.utils
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone


@dataclass(frozen=True)
class RetryPolicy:
    """How long to keep trying on transient failures: bounded in attempts and in time."""

    max_attempts: int = 5
    max_total_s: float = 120.0
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0

    def delay(self, attempt: int, retry_after: float | None, rng: Callable[[], float]) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        The server's ``Retry-After`` wins, capped at ``max_delay_s``; otherwise exponential
        backoff with full jitter, so many clients hit by the same outage spread out.
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay_s)
        ceiling = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        return ceiling * rng()


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        value: float | None
        try:
            value = float(raw) * scale
        except ValueError:
            value = _seconds_until(raw)
        if value is not None and math.isfinite(value) and value >= 0:
            return value
    return None


def _seconds_until(http_date: str) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
