"""The grader's Jupyter server lets its pages load pictures, media and fonts only from itself.

A TA opens a student's submitted notebook, or a Markdown file handed in beside it, in the grader's
JupyterLab (the hub's formgrader service, or a TA's own JupyterLab in the course folder). An
untrusted notebook's Markdown cells and HTML outputs go through JupyterLab's own sanitizer, which
keeps an `<img>` or `<video>` of any address and a CSS `background-image: url(...)`: each was
requested from the student's server as the notebook opened, so the student learnt when, and from
where, the TA read it. Every page of this server (JupyterLab's, formgrader's, `/files/`) now says
`img-src`, `media-src` and `font-src` 'self' data: blob: in its Content-Security-Policy, on top of
the policy the server already sends (JupyterHub's or Jupyter's own `frame-ancestors 'self'; report-uri
...`). Nothing of JupyterLab's own comes from elsewhere.

Applied by nbgrader_config.py when a Jupyter server reads it (formgrader loads the course's config
while the server starts); nothing to do in any other process.
"""

from __future__ import annotations

import sys

POLICY_HEADER = "Content-Security-Policy"
OWN_LOADS = ("img-src 'self' data: blob:", "media-src 'self' data: blob:", "font-src 'self' data:")


def _served_policy(settings: dict) -> str:
    """The policy the server sends today (jupyter_server's JupyterHandler.content_security_policy)."""
    policy = settings.get("headers", {}).get(POLICY_HEADER)
    if policy:
        return policy
    from jupyter_server.services.security import csp_report_uri
    from jupyter_server.utils import url_path_join

    report = settings.get("csp_report_uri", url_path_join(settings.get("base_url", "/"), csp_report_uri))
    return f"frame-ancestors 'self'; report-uri {report}"


def with_own_loads(policy: str) -> str:
    """`policy` with OWN_LOADS in it (once)."""
    directives = [d.strip() for d in policy.split(";") if d.strip()]
    named = {d.split()[0].lower() for d in directives}
    return "; ".join(directives + [d for d in OWN_LOADS if d.split()[0] not in named])


def bound_page_loads() -> bool:
    """Give every page of the Jupyter server running in this process (if one does: True then) a
    policy that loads pictures, media and fonts only from the server itself. Idempotent."""
    serverapp = sys.modules.get("jupyter_server.serverapp")
    if serverapp is None or not serverapp.ServerApp.initialized():
        return False
    web_app = getattr(serverapp.ServerApp.instance(), "web_app", None)
    if web_app is None:
        return False
    headers = web_app.settings.setdefault("headers", {})
    headers[POLICY_HEADER] = with_own_loads(_served_policy(web_app.settings))
    return True
