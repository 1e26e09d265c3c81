"""The local web UI (``toolsmith ui``): the library, review, runs and an overview in a browser.

* :mod:`~toolsmith.ui.app` builds the Starlette app and serves it;
* :mod:`~toolsmith.ui.auth` owns the token, the session cookie and CSRF;
* :mod:`~toolsmith.ui.routes` holds the endpoints; :mod:`~toolsmith.ui.views` the queries
  behind each page; :mod:`~toolsmith.ui.listing` filters, sorts and pages the library list;
  :mod:`~toolsmith.ui.runs` reads trajectories; :mod:`~toolsmith.ui.charts` draws the SVG plots;
* ``templates/`` (Jinja2, autoescaped) and ``static/`` (one stylesheet and an icon, no script).
"""

from toolsmith.ui.app import check_host, create_app, serve

__all__ = ["check_host", "create_app", "serve"]
