"""The agent runtime: the loop that talks to the model, and everything one task uses.

* :mod:`~toolsmith.agent.session` runs a list of tasks for a front end (the CLI, MCP's
  ``solve_task``, an evaluation) and writes the run record and the trajectory
  (:mod:`~toolsmith.agent.trajectory`);
* :mod:`~toolsmith.agent.loop` is the :class:`Agent`: model turns, tool calls, reminders;
* :mod:`~toolsmith.agent.toolbox` is the one door every tool call of a task goes through;
* :mod:`~toolsmith.agent.guards` are the rules the program enforces at fixed hook points;
* :mod:`~toolsmith.agent.metatools` are the five meta-tools, one module each;
* :mod:`~toolsmith.agent.context` is one task's state, and :mod:`~toolsmith.agent.prompts`
  every text the model reads from the program;
* :mod:`~toolsmith.agent.offline` is the keyless self-test (``toolsmith demo --offline``).
"""
