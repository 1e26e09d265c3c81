"""Evaluation of toolsmith on Inspect AI: built-in task suites, their ground truth and
answer checks, toolsmith as an Inspect solver, and the paired-arms report.

* :mod:`~toolsmith.evals.checks`, :mod:`~toolsmith.evals.groundtruth`, ``suites/``: the
  suites, their truth computed from pinned packages, the answer checker;
* :mod:`~toolsmith.evals.distractors`: working tools from other domains to seed a library;
* :mod:`~toolsmith.evals.adapter`: toolsmith's Model over Inspect's model API (the seam);
* :mod:`~toolsmith.evals.solver`: the ``toolsmith/toolsmith`` solver, one session per sample;
* :mod:`~toolsmith.evals.libraries`: which library a sample runs against (shared,
  per epoch, a read-only snapshot), with distractors seeded once;
* :mod:`~toolsmith.evals.figures`: toolsmith's per-sample figures in the sample store;
* :mod:`~toolsmith.evals.tasks`: ``toolsmith/day_of_use`` and ``toolsmith/pairs``;
* :mod:`~toolsmith.evals.arms`, :mod:`~toolsmith.evals.logs`,
  :mod:`~toolsmith.evals.summary`, :mod:`~toolsmith.evals.report`,
  :mod:`~toolsmith.evals.curve`: the arms, read back from their logs, and the report.

Importing this package loads nothing; the Inspect modules need the ``eval`` extra.
"""
