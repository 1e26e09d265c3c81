"""The web as the agent reaches it: search for libraries, and read their documentation.

:mod:`~toolsmith.web.search` tries the configured search backends in order (DDGS,
SearXNG, :mod:`~toolsmith.web.package_search` over the package index);
:mod:`~toolsmith.web.read` fetches a page or a package's metadata and
:mod:`~toolsmith.web.page_text` turns HTML into the text a model reads;
:mod:`~toolsmith.web.http` is their shared HTTP client.
"""
