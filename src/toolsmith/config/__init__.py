"""Settings: the layered configuration (defaults, ``config.toml``, ``.env`` files, the
environment) and the model provider a run talks to.

:mod:`~toolsmith.config.settings` declares and loads the settings, each once, in the
vocabulary of :mod:`~toolsmith.config.kinds`; :mod:`~toolsmith.config.reference` renders
them as the README's table; :mod:`~toolsmith.config.envfiles` reads ``.env`` files (a
cloned repository's may be hostile), and :mod:`~toolsmith.config.providers` picks the
provider, key and endpoint; :mod:`~toolsmith.config.home` says whether the home can be used.
"""

from toolsmith.config.settings import (
    CONFIG_KEYS,
    DEFAULTS,
    ENVIRONMENT_VARIABLES,
    ModelSettings,
    Settings,
    default_home,
    unknown_environment,
)

__all__ = [
    "CONFIG_KEYS",
    "DEFAULTS",
    "ENVIRONMENT_VARIABLES",
    "ModelSettings",
    "Settings",
    "default_home",
    "unknown_environment",
]
