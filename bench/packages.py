"""Typosquat check speed: the indexed near-miss lookup against a full edit-distance scan.

Every package a model asks to install is checked against the shipped list of popular
names (:mod:`toolsmith.packages.policy`). The check looks up a query's one-edit
neighbourhood and, for long names, the names sharing enough bigrams with it, instead of
computing the edit distance to every popular name. This prints the list's load time and
the per-query time of both ways, measured in the same run, and the ratio between them;
it also counts the queries where the two disagree (there should be none).

    python bench/packages.py [--queries 100] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from toolsmith.packages.policy import LONG_NAME, MIN_TYPO_LENGTH, PopularNames, distance, popular_names


def queries(popular: PopularNames, count: int, seed: int) -> list[str]:
    """Popular names with one or two random edits, as a model's misspelling would be."""
    rng = random.Random(seed)
    names = [n for n in popular.by_stripped if len(n) >= MIN_TYPO_LENGTH]
    found = []
    for name in rng.sample(names, min(count, len(names))):
        chars = list(name)
        for _ in range(2 if len(name) >= LONG_NAME else 1):
            chars[rng.randrange(len(chars))] = rng.choice("qxzjkvw")
        found.append("".join(chars))
    return found


def scan(popular: PopularNames, query: str) -> str | None:
    """The baseline: the edit distance to every popular name, closest (then most popular) wins."""
    bound = 2 if len(query) >= LONG_NAME else 1
    best: tuple[int, int, str] | None = None
    for stripped, key in popular.by_stripped.items():
        d = distance(query, stripped, bound)
        if 0 < d <= bound and (best is None or (d, popular.rank[key]) < best[:2]):
            best = (d, popular.rank[key], key)
    return best[2] if best else None


def per_query(fn: Callable[[str], object], items: list[str]) -> float:
    started = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - started) / len(items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    popular_names.cache_clear()
    started = time.perf_counter()
    popular = popular_names()
    loaded = time.perf_counter() - started
    items = queries(popular, args.queries, args.seed)
    popular.near(items[0])  # builds the bigram index, as the first long query would

    indexed = statistics.median(per_query(popular.near, items) for _ in range(3))
    scanned = per_query(lambda q: scan(popular, q), items)
    disagree = [
        q
        for q in items
        if (hit := popular.near(q)) is not None and hit.how.startswith("edit") and hit.popular != scan(popular, q)
    ]
    print(f"popular names: {len(popular.by_stripped)}, loaded in {loaded * 1000:.1f} ms")
    print(f"queries: {len(items)} misspelt popular names (seed {args.seed})")
    print(f"indexed lookup: {indexed * 1e6:9.1f} us/query")
    print(f"full scan:      {scanned * 1e6:9.1f} us/query")
    print(
        f"ratio: the indexed lookup takes {indexed / scanned:.4f} of the scan's time ({scanned / indexed:.0f}x faster)"
    )
    print(f"queries where the two disagree: {len(disagree)}")


if __name__ == "__main__":
    main()
