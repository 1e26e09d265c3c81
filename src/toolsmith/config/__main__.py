"""``python -m toolsmith.config --readme``: print the README's settings tables."""

from __future__ import annotations

import sys

from toolsmith.config.reference import readme_tables


def main(argv: list[str]) -> int:
    if argv != ["--readme"]:
        print("usage: python -m toolsmith.config --readme", file=sys.stderr)
        return 2
    print(readme_tables())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
