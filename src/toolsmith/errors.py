"""The one exception hierarchy of toolsmith.

Every error the package raises on purpose derives from :class:`ToolsmithError`.
Two families matter to callers:

* errors a *user* must fix derive from :class:`SettingError`: their typed ``setting``
  names the setting, environment variable, option or path to change, and the CLI
  turns them into exit code 2 (:class:`ConfigError` is the case where the setting's
  value itself is wrong; a database server that refuses us names ``library.url``);
* errors a *model* can fix (a refused install) are caught by the agent loop and
  sent back to the model as tool results.

A failed tool call is not an exception at all: it is a result whose
:class:`~toolsmith.isolation.result.FailureKind` says what went wrong and whose fault
it is (the tool's, the caller's or the machine's).

Sandbox errors carry the run's data (``exit_code``, ``stdout``, ``stderr``,
``timed_out``) so that nothing has to be parsed back out of a message.

    ToolsmithError
    ├── SettingError  (also the base of the errors marked *setting*)
    │   ├── ConfigError
    │   │   ├── MissingKeyError
    │   │   └── KeyFileError
    │   └── TaskTooLongError
    ├── LibraryError
    │   ├── CorruptLibraryError
    │   ├── DamagedRecordError
    │   ├── LibraryPermissionError  (setting)
    │   ├── LibraryUnavailableError  (setting)
    │   ├── LibraryNotEmptyError  (setting)
    │   ├── ToolNotFoundError
    │   ├── ImmutableVersionError
    │   ├── ReviewError
    │   └── BundleError
    │       └── SignatureError
    ├── SearchBackendError
    ├── SandboxError
    │   └── SandboxUnavailableError  (setting)
    ├── PackageError
    │   ├── PackageRefused
    │   └── InstallError
    ├── SuiteError
    └── ModelError
        ├── ModelConfigError  (also a ConfigError)
        ├── ModelRetryExhausted
        ├── ModelTimeoutError  (setting)
        └── ModelResponseError
"""

from __future__ import annotations

from pathlib import Path


class ToolsmithError(Exception):
    """Base class for every error toolsmith raises on purpose."""


# --- configuration: the user must change something ---------------------------------


class SettingError(ToolsmithError):
    """An error the user fixes by changing ``setting``: a configuration key, an environment
    variable, a command-line option or a path. Other families mix it in (a library server
    that refuses us names ``library.url``), so callers catch this class, never an attribute."""

    setting: str


class ConfigError(SettingError):
    """A setting is missing or invalid. ``setting`` names what to change."""

    def __init__(self, message: str, *, setting: str) -> None:
        super().__init__(message)
        self.setting = setting


class MissingKeyError(ConfigError):
    """The chosen model provider has no API key."""

    def __init__(self, provider: str, variable: str) -> None:
        super().__init__(
            f"No API key for provider {provider!r}: set {variable} in the environment or in a "
            f".env file (or pick another provider with LLM_PROVIDER). "
            f"To try toolsmith without any key, run `toolsmith demo --offline`.",
            setting=variable,
        )
        self.provider = provider
        self.variable = variable


class TaskTooLongError(SettingError):
    """A task holds more characters than ``budget.max_task_chars`` allows. ``chars`` is its
    length (None when reading stopped at the limit); ``source`` where it came from."""

    def __init__(self, chars: int | None, limit: int, *, source: str | None = None) -> None:
        where = f" in {source}" if source else ""
        size = f"has {chars:,} characters" if chars is not None else f"has more than {limit:,} characters"
        super().__init__(
            f"The task{where} {size}; budget.max_task_chars allows {limit:,}. Shorten it, or raise "
            f"budget.max_task_chars in config.toml (0: no limit)."
        )
        self.chars = chars
        self.limit = limit
        self.source = source
        self.setting = "budget.max_task_chars"


# --- the tool library ---------------------------------------------------------------


class LibraryError(ToolsmithError):
    """A tool library operation failed."""


class CorruptLibraryError(LibraryError):
    """The library file (or database) is not a toolsmith library, or is damaged.
    It is never overwritten. ``path`` is the file, or the database URL without password."""

    def __init__(self, path: Path | str, detail: str) -> None:
        super().__init__(
            f"{path} is not a usable toolsmith library ({detail}). It was left untouched; "
            + (
                "move it aside or point TOOLSMITH_HOME at another directory."
                if isinstance(path, Path)
                else "point library.url (or TOOLSMITH_LIBRARY_URL) at another database."
            )
        )
        self.path = path
        self.detail = detail


class DamagedRecordError(LibraryError):
    """A stored row does not decode (JSON that does not parse, a field missing or of the
    wrong kind, an unknown status). Raised by :mod:`toolsmith.library.rows`, which knows
    no location; the library reports it as :class:`CorruptLibraryError` naming itself."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"a stored record is damaged ({detail})")
        self.detail = detail


class LibraryUnavailableError(LibraryError, SettingError):
    """The library's database server cannot be reached or refuses us (down, wrong
    credentials, connection lost). ``where`` is the URL with its password redacted."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(
            f"Cannot use the tool library at {where}: {detail}. Nothing was written; check the server "
            f"and library.url (or TOOLSMITH_LIBRARY_URL)."
        )
        self.where = where
        self.detail = detail
        self.setting = "library.url"


class LibraryPermissionError(LibraryError, SettingError):
    """A library file (or its folder) cannot be written by this user; ``path`` names which."""

    def __init__(self, message: str, *, path: Path) -> None:
        super().__init__(message)
        self.path = path
        self.setting = str(path)  # the user must change it: the CLI exits 2


class LibraryNotEmptyError(LibraryError, SettingError):
    """A library to copy into already holds tools (or an audit trail); it is left untouched."""

    def __init__(self, where: str) -> None:
        super().__init__(f"The target library {where} is not empty; migrate only into a new library.")
        self.where = where
        self.setting = "--to"


class ToolNotFoundError(LibraryError):
    """No tool (or no such version of it) exists in the library."""

    def __init__(self, name: str, version: int | None = None) -> None:
        what = f"{name}@{version}" if version is not None else name
        shown = repr(what) if len(what) <= 96 else repr(what[:96]) + "..."  # a 10,000-character name stays short
        super().__init__(f"No tool named {shown} in the library.")
        self.name = name
        self.version = version


class ImmutableVersionError(LibraryError):
    """Something tried to change a stored tool version; versions never change."""


class BundleError(LibraryError):
    """An exported tool folder is malformed, tampered with or wrongly signed."""

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


# --- the save-time gate -------------------------------------------------------------


# --- evaluation suites -----------------------------------------------------------------


class SuiteError(ToolsmithError):
    """An evaluation suite is missing or malformed; ``path`` names the file when there is one."""

    def __init__(self, message: str, *, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


# --- the web --------------------------------------------------------------------------


class SearchBackendError(ToolsmithError):
    """A web search backend failed; ``rate_limited`` means a short pause may help."""

    def __init__(self, message: str, *, rate_limited: bool = False, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.rate_limited = rate_limited
        self.retry_after_s = retry_after_s


# --- the sandbox --------------------------------------------------------------------


class SandboxError(ToolsmithError):
    """Running code in the sandbox failed. Carries the run's data."""

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        exit_code: int | None = None,
        stdout: str = "",
        stderr: str = "",
        timed_out: bool = False,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out


class SandboxUnavailableError(SandboxError, SettingError):
    """The configured sandbox backend cannot run on this machine."""

    def __init__(self, message: str, *, setting: str = "sandbox.backend") -> None:
        super().__init__(message)
        self.setting = setting


# --- package installs ---------------------------------------------------------------


class PackageError(ToolsmithError):
    """A package request or install failed."""


class PackageRefused(PackageError):
    """A requested package was refused before anything was installed."""

    def __init__(self, requirement: str, reason: str, *, suggestion: str | None = None) -> None:
        hint = f" Did you mean {suggestion!r}?" if suggestion else ""
        super().__init__(f"Refused to install {requirement!r}: {reason}.{hint}")
        self.requirement = requirement
        self.reason = reason
        self.suggestion = suggestion


class InstallError(PackageError):
    """The installer ran and failed."""

    def __init__(self, message: str, *, stderr: str = "", exit_code: int | None = None) -> None:
        super().__init__(message)
        self.stderr = stderr
        self.exit_code = exit_code


# --- the model ----------------------------------------------------------------------


class ModelError(ToolsmithError):
    """Talking to the model failed."""


class ModelConfigError(ModelError, ConfigError):
    """The endpoint refused the key, the model name or the URL: the user must change a setting."""

    def __init__(self, message: str, *, setting: str) -> None:
        ConfigError.__init__(self, message, setting=setting)


class ModelRetryExhausted(ModelError):
    """Transient failures went on past the retry budget, or the provider asked to wait longer.

    ``reached`` is False when no attempt ever got through to the endpoint (connection
    refused or timed out), the only case in which "could not be reached" is true;
    ``retry_after`` is the wait the provider last asked for, in seconds.
    """

    def __init__(
        self,
        message: str,
        *,
        attempts: int,
        last_error: str,
        reached: bool = True,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.last_error = last_error
        self.reached = reached
        self.retry_after = retry_after


class ModelTimeoutError(ModelError, SettingError):
    """The endpoint sent no answer (or stopped sending one) within the per-request timeout.

    Not retried by default: the server is most likely still generating. ``setting`` names
    the timeout to raise.
    """

    def __init__(self, message: str, *, setting: str, timeout_s: float) -> None:
        super().__init__(message)
        self.setting = setting
        self.timeout_s = timeout_s


class ModelResponseError(ModelError):
    """The endpoint answered with something that is not a usable chat completion.

    ``check_url`` marks answers that suggest the base URL points at something other than
    the API (an HTML page, text that is not JSON).
    """

    def __init__(self, message: str, *, check_url: bool = False) -> None:
        super().__init__(message)
        self.check_url = check_url


# --- review and signed bundles (appended) ---------------------------------------------


class ReviewError(LibraryError):
    """A review decision does not fit the version's state (e.g. approving an active one)."""

    def __init__(self, message: str, *, name: str, version: int | None = None) -> None:
        super().__init__(message)
        self.name = name
        self.version = version


class SignatureError(BundleError):
    """A bundle's signature is missing, malformed, made by another key, or does not verify."""


class KeyFileError(ConfigError):
    """A signing or verification key file cannot be read, written or parsed."""

    def __init__(self, message: str, *, path: Path, setting: str) -> None:
        super().__init__(message, setting=setting)
        self.path = path


class VersionNotServedError(LibraryError):
    """A caller named (or pinned) a version that is not served: pending, quarantined or retired.

    ``served`` is the version served now (None when none is), so a message can name it."""

    def __init__(self, message: str, *, name: str, version: int, status: str, served: int | None) -> None:
        super().__init__(message)
        self.name = name
        self.version = version
        self.status = status
        self.served = served
