"""The save-time checks a tool passes before it is stored, and the judgements they share.

:mod:`~toolsmith.gate.core` runs them in order (:class:`~toolsmith.gate.core.Gate`);
:mod:`~toolsmith.gate.antimock` and :mod:`~toolsmith.gate.generality` judge the code on
its syntax tree; :mod:`~toolsmith.gate.verification` judges whether a run printed real
output, which ``create_tool`` needs first.
"""
