"""Which model endpoint to talk to, with which key: provider selection from the environment.

:func:`resolve_provider` turns ``LLM_PROVIDER``, ``LLM_MODEL``, ``LLM_BASE_URL`` /
``OPENAI_BASE_URL`` and the providers' key variables into one :class:`ProviderConfig`.
Rules worth knowing (the CLI help and README repeat them):

* a named provider uses its own key variable and its official base URL;
* ``LLM_BASE_URL`` points any provider at another OpenAI-compatible server. With no
  ``LLM_PROVIDER`` it means ``custom``, whose key is ``LLM_API_KEY`` only, so a key meant
  for one company is never sent to a URL somebody else runs;
* a server on this machine or the local network needs no key (a placeholder is sent);
* when the chosen provider's key is missing but ``OPENROUTER_API_KEY`` is set, the
  request goes to OpenRouter instead, with the model name mapped into its namespace.

The key lives only in :attr:`ProviderConfig.api_key`; nothing that prints a config shows it.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from toolsmith.calls import JSONObject
from toolsmith.errors import ConfigError, MissingKeyError

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
# Sent when an endpoint needs no key: the SDK insists on one, and an empty string would
# make it pick up OPENAI_API_KEY from the environment and send that instead.
LOCAL_PLACEHOLDER_KEY = "no-key-needed"
PLACEHOLDER_KEYS = frozenset({"ollama", LOCAL_PLACEHOLDER_KEY})


@dataclass(frozen=True)
class _Spec:
    key_variable: str | None
    base_url: str | None  # None: the SDK's default (OpenAI) or, for custom, required
    default_model: str  # "" when only the user can know (what a local server serves)


PROVIDERS: Mapping[str, _Spec] = {
    "openai": _Spec("OPENAI_API_KEY", None, "gpt-5.4-mini"),
    "moonshot": _Spec("MOONSHOT_API_KEY", "https://api.moonshot.cn/v1", "kimi-k2.5"),
    "ark": _Spec("ARK_API_KEY", "https://ark.cn-beijing.volces.com/api/v3", "doubao-seed-1-6-251015"),
    "openrouter": _Spec("OPENROUTER_API_KEY", OPENROUTER_BASE_URL, "openai/gpt-5.4-mini"),
    "ollama": _Spec(None, "http://localhost:11434/v1", "qwen3:8b"),
    "vllm": _Spec(None, "http://localhost:8000/v1", ""),
    "lmstudio": _Spec(None, "http://localhost:1234/v1", ""),
    "custom": _Spec(None, None, ""),
}
_ALIASES = {
    "kimi": "moonshot",
    "volcengine": "ark",
    "volces": "ark",
    "doubao": "ark",
    "lm-studio": "lmstudio",
    "lm_studio": "lmstudio",
    "openai-compatible": "custom",
    "openai_compatible": "custom",
}
# Providers whose missing key may be replaced by an OpenRouter key.
_FALLBACK_FROM = ("openai", "moonshot", "ark")


@dataclass(frozen=True)
class ProviderConfig:
    """One resolved model endpoint. ``api_key`` is kept out of repr, str and to_dict."""

    provider: str
    model: str
    base_url: str | None
    api_key: str = field(repr=False)
    key_variable: str | None
    # The provider the user asked for when its key was missing and OpenRouter stood in.
    fallback_from: str | None = None
    # The variable that set base_url (LLM_BASE_URL or OPENAI_BASE_URL), for error messages;
    # None when the URL is the provider's own default.
    url_variable: str | None = None

    @property
    def key_present(self) -> bool:
        """True when a real key (not a placeholder for a keyless local server) is set."""
        return bool(self.api_key) and self.api_key not in PLACEHOLDER_KEYS

    def to_dict(self) -> JSONObject:
        """What may be shown or recorded about this endpoint: everything but the key."""
        return {
            "provider": self.provider,
            "model": self.model,
            "base_url": self.base_url,
            "key_variable": self.key_variable,
            "key_present": self.key_present,
            "fallback_from": self.fallback_from,
            "url_variable": self.url_variable,
        }


def resolve_provider(
    env: Mapping[str, str] | None = None,
    *,
    model: str | None = None,
    provider: str | None = None,
) -> ProviderConfig:
    """Pick provider, model, base URL and key. ``model`` (``--model``) beats ``LLM_MODEL``.

    Raises :class:`MissingKeyError` when a key is needed and absent, and
    :class:`ConfigError` (naming the variable) for an unknown provider, a bad URL or a
    model that cannot be known.
    """
    env = os.environ if env is None else env
    explicit = _clean(provider) or _clean(env.get("LLM_PROVIDER"))
    if not explicit and _clean(env.get("LLM_BASE_URL")):
        explicit = "custom"  # a bare base URL means "my own server", not OpenAI
    name = provider_name(explicit or "openai")
    spec = PROVIDERS[name]
    base_url, url_variable = _base_url(name, spec, env)
    chosen = _clean(model) or _clean(env.get("LLM_MODEL")) or spec.default_model
    if name == "openrouter":
        chosen = openrouter_model(chosen)
    key, key_variable = _find_key(spec, env, url_variable)
    if key:
        return ProviderConfig(name, _need_model(chosen, name), base_url, key, key_variable, url_variable=url_variable)
    if _key_optional(name, spec, base_url, url_variable):
        placeholder = "ollama" if name == "ollama" else LOCAL_PLACEHOLDER_KEY
        return ProviderConfig(name, _need_model(chosen, name), base_url, placeholder, None, url_variable=url_variable)
    openrouter_key = _clean(env.get("OPENROUTER_API_KEY"))
    if openrouter_key and url_variable is None and name in _FALLBACK_FROM:
        return ProviderConfig(
            "openrouter",
            openrouter_model(chosen, origin=name),
            OPENROUTER_BASE_URL,
            openrouter_key,
            "OPENROUTER_API_KEY",
            fallback_from=name,
        )
    raise MissingKeyError(name, spec.key_variable or "LLM_API_KEY")


def provider_name(raw: str) -> str:
    """The canonical provider name for ``raw`` (case and a few aliases forgiven)."""
    name = raw.strip().lower()
    name = _ALIASES.get(name, name)
    if name not in PROVIDERS:
        raise ConfigError(
            f"LLM_PROVIDER must be one of {', '.join(PROVIDERS)}; got {raw!r}.",
            setting="LLM_PROVIDER",
        )
    return name


def _clean(value: str | None) -> str:
    return value.strip() if value else ""


def _need_model(model: str, provider: str) -> str:
    if not model:
        raise ConfigError(
            f"Provider {provider!r} has no default model: set LLM_MODEL (or pass --model) to "
            f"a model your server serves.",
            setting="LLM_MODEL",
        )
    return model


def _base_url(name: str, spec: _Spec, env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The base URL and the variable it came from (None: the provider's own default)."""
    candidates = ["LLM_BASE_URL"]
    if name in ("openai", "custom"):
        # OPENAI_BASE_URL is the SDK's own variable, so it only speaks for OpenAI-style use.
        candidates.append("OPENAI_BASE_URL")
    for variable in candidates:
        url = _clean(env.get(variable))
        if url:
            return _check_url(url, variable), variable
    if name == "custom":
        raise ConfigError(
            "LLM_PROVIDER=custom needs LLM_BASE_URL, the OpenAI-compatible endpoint to use "
            "(for example http://localhost:8000/v1).",
            setting="LLM_BASE_URL",
        )
    return spec.base_url, None


def _check_url(url: str, variable: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{variable} must be an http(s) URL such as http://localhost:8000/v1; got {url!r}.",
            setting=variable,
        )
    return url.rstrip("/")


def _find_key(spec: _Spec, env: Mapping[str, str], url_variable: str | None) -> tuple[str, str | None]:
    candidates: list[str] = []
    if url_variable is not None or spec.key_variable is None:
        candidates.append("LLM_API_KEY")
    if spec.key_variable is not None:
        candidates.append(spec.key_variable)
    elif url_variable == "OPENAI_BASE_URL":
        candidates.append("OPENAI_API_KEY")  # the SDK pairs these two
    for variable in candidates:
        key = _clean(env.get(variable))
        if key:
            return key, variable
    return "", None


def _key_optional(name: str, spec: _Spec, base_url: str | None, url_variable: str | None) -> bool:
    if name == "ollama":
        return True
    own_server = url_variable is not None or spec.key_variable is None
    return own_server and base_url is not None and is_local_url(base_url)


# --- URL classes --------------------------------------------------------------------


def is_loopback_url(url: str) -> bool:
    """True when ``url`` points at this machine (localhost, 127.0.0.0/8, ::1)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_local_url(url: str) -> bool:
    """True for this machine or the local network (private, link-local, ``.local`` names)."""
    if is_loopback_url(url):
        return True
    host = (urlsplit(url).hostname or "").lower()
    if host.endswith(".local") or host == "0.0.0.0":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_link_local or any(address in net for net in _PRIVATE_NETWORKS)


# Private-use ranges only (RFC 1918, IPv6 unique-local); ipaddress's is_private also
# counts documentation and other reserved ranges, which are not "my own network".
_PRIVATE_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
)


# --- OpenRouter model names -----------------------------------------------------------

_OPENROUTER_EXACT = {
    "kimi-k2-0711-preview": "moonshotai/kimi-k2",
    "kimi-k2-0905-preview": "moonshotai/kimi-k2-0905",
    "kimi-latest": "moonshotai/kimi-k2.5",
}
# Name prefix -> OpenRouter vendor namespace, for names that carry no origin.
_VENDOR_PREFIXES = (
    (("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-"), "openai"),
    (("kimi-", "moonshot-"), "moonshotai"),
    (("deepseek-",), "deepseek"),
    (("claude-",), "anthropic"),
    (("gemini-",), "google"),
    (("qwen",), "qwen"),
    (("glm-",), "z-ai"),
)
_DATE_SUFFIX = re.compile(r"-\d{6}$")
_SEED = re.compile(r"^doubao-seed-(\d+)-(\d+)((?:-[a-z]+)*)$")


def openrouter_model(model: str, *, origin: str | None = None) -> str:
    """``model`` as OpenRouter names it: ``gpt-4o`` -> ``openai/gpt-4o``.

    Names that already hold a ``/`` pass through. ``origin`` is the provider the name was
    meant for; without it the vendor is guessed from the name, and unknown names pass
    through unchanged. An ARK endpoint id (``ep-...``) has no OpenRouter equivalent.
    """
    name = model.strip()
    if "/" in name:
        return name
    lowered = name.lower()
    if lowered in _OPENROUTER_EXACT:
        return _OPENROUTER_EXACT[lowered]
    if origin == "ark" or lowered.startswith(("doubao-", "ep-")):
        return _ark_to_openrouter(lowered)
    if origin == "moonshot":
        return f"moonshotai/{lowered.removesuffix('-preview')}"
    if origin == "openai":
        return f"openai/{name}"
    for prefixes, vendor in _VENDOR_PREFIXES:
        if lowered.startswith(prefixes):
            return f"{vendor}/{lowered.removesuffix('-preview')}"
    return name


def _ark_to_openrouter(name: str) -> str:
    """ARK model ids carry a date suffix and dashes for dots: doubao-seed-1-6-251015."""
    base = _DATE_SUFFIX.sub("", name)
    seed = _SEED.match(base)
    if seed:
        major, minor, variant = seed.groups()
        return f"bytedance-seed/seed-{major}.{minor}{variant}"
    if base.startswith("deepseek-r1"):
        return "deepseek/deepseek-r1"
    if base.startswith("deepseek-v3"):
        return "deepseek/deepseek-chat"
    if base.startswith("kimi-k2"):
        return "moonshotai/kimi-k2"
    raise ConfigError(
        f"The ARK model {name!r} has no known OpenRouter equivalent, and ARK_API_KEY is not "
        f"set. Set ARK_API_KEY, or set LLM_MODEL to an OpenRouter model id such as "
        f"{PROVIDERS['openrouter'].default_model!r}.",
        setting="LLM_MODEL",
    )
