"""When to try a model request again, and how long to wait first.

:class:`RetryPolicy` stops on time, with an attempt cap as a backstop: a burst of 503s
must not end a task whose time budget has room left. The provider's own request to wait
(``retry-after-ms`` or ``Retry-After``, read by :func:`parse_retry_after`) is honoured in
full, or, when it is longer than the budget left, ends the retries at once.
"""

from __future__ import annotations

import email.utils
import enum
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timezone

DEFAULT_TIMEOUT_S = 600.0  # per request, as the openai SDK's own default
DEFAULT_RETRY_TOTAL_S = 300.0
DEFAULT_MAX_ATTEMPTS = 10


class Stop(enum.Enum):
    """Why no further attempt is made."""

    ATTEMPTS = "attempts"  # the attempt cap was reached
    BUDGET = "budget"  # the next backoff would end past the time budget
    RETRY_AFTER = "retry_after"  # the provider asked for a wait longer than the budget left


@dataclass(frozen=True)
class RetryPolicy:
    """How long to keep retrying transient failures of one model request.

    ``total_s`` is counted from the start of the first attempt; no attempt starts after it.
    Each attempt still gets the full per-request timeout, so a slow answer on a retry is
    not cut short. ``retry_timeouts`` retries a request that got no answer in time: off by
    default, because the server is most likely still generating, and a second request
    would double its load.
    """

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    total_s: float = DEFAULT_RETRY_TOTAL_S
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    retry_timeouts: bool = False

    def next_delay(
        self, attempt: int, elapsed: float, retry_after: float | None, rng: Callable[[], float]
    ) -> float | Stop:
        """Seconds to wait before attempt ``attempt + 1``, or why to stop.

        ``attempt`` is the number of the attempt that just failed (1-based) and
        ``elapsed`` the seconds since the first one started. Without ``Retry-After`` the
        wait is exponential backoff with full jitter, so clients hit by one outage spread
        out.
        """
        if attempt >= self.max_attempts:
            return Stop.ATTEMPTS
        if retry_after is not None:
            wait = max(retry_after, 0.0)
            return Stop.RETRY_AFTER if elapsed + wait > self.total_s else wait
        ceiling = min(self.max_delay_s, self.base_delay_s * 2.0 ** (attempt - 1))
        wait = ceiling * rng()
        return Stop.BUDGET if elapsed + wait >= self.total_s else wait


def parse_retry_after(headers: Mapping[str, str], *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds, or an HTTP date read
    against ``now``, the Unix time)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        value: float | None
        try:
            value = float(raw) * scale
        except ValueError:
            value = _seconds_until(raw, now())
        if value is not None and math.isfinite(value) and value >= 0:
            return value
    return None


def _seconds_until(http_date: str, now: float) -> float | None:
    try:
        when = email.utils.parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - now)
