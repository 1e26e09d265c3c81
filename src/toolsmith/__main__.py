"""Allow `python -m toolsmith`."""

from toolsmith.cli import main

main()
