"""Evaluation of toolsmith: built-in task suites, their ground truth and answer checks."""
