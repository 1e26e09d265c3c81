"""Package installs: what a model may install, the index client, pins and the environment.

The subsystem sits above :mod:`toolsmith.isolation` (installers run inside its isolation)
and below the library and the agent. Its modules, lowest first:

* :mod:`~toolsmith.packages.requirement`: a recorded pin (name, version, sha256);
* :mod:`~toolsmith.packages.index`: which package index, and what it says about a project;
* :mod:`~toolsmith.packages.policy`: parsing a model's install request, refusals, typosquats;
* :mod:`~toolsmith.packages.hooks`: start-up hooks (``.pth`` code, ``sitecustomize``) in an environment;
* :mod:`~toolsmith.packages.env`: the library's virtual environment: checked installs, pins, sync.

This file imports nothing, so the library can load a :class:`Requirement` without
pulling in the index client or the installers.
"""
