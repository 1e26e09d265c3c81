"""Ground truth of the evaluation suites, computed from the real packages (see build.py)."""
