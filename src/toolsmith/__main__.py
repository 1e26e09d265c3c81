"""Allow `python -m toolsmith`."""

from toolsmith.entry import main

main()
