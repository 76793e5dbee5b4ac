"""Whether every user's server shares the hub's origin, for jupyterhub_config.py.

Without `subdomain_host` every server answers under the hub's own address (/user/<name>/), and
the proxy hands that path to whatever listens on the server's port, to anyone who asks. A student
who stops her own server and binds its port before the hub notices (it polls every 30 s) answers
there with a page of her own; opened by the instructor (a link in an answer, "look at my
plot"), its script runs on the hub's origin with the instructor's session: it opens the course's
formgrader (the grader user's JupyterLab in the course folder, solutions included) and the hub's
API as an admin. Only the deployment can put each server on an origin of its own (wildcard DNS
and a wildcard TLS certificate): so the hub does not start without it unless the courses file
says the risk is accepted (`shared_origin = "accept"`), and then says so loudly at every start.
"""

from __future__ import annotations

import sys

from hub_courses import Hub

ACCEPT = 'shared_origin = "accept"'


def shared_origin_problem(hub: Hub) -> str | None:
    """Why every user's server would share the hub's origin, or None where each has its own."""
    if hub.subdomain_host:
        return None
    return ("every user's server would answer on the hub's own origin (/user/<name>/): a student who "
            "takes her server's port serves the instructor pages that run with the instructor's session "
            "(the course's formgrader, the hub's API)")


def refuse_shared_origin(hub: Hub) -> None:
    problem = shared_origin_problem(hub)
    if problem is None:
        return
    if not hub.shared_origin_accepted:
        print(f"not starting the hub: {problem}; set subdomain_host in the courses file (wildcard DNS and "
              f"TLS, docs/jupyterhub.md), or write {ACCEPT} there to run on one origin knowingly",
              file=sys.stderr)
        sys.exit(1)
    print(f"WARNING: {problem}. The courses file accepts this ({ACCEPT}); instructors and TAs must open "
          f"no link to /user/<student>/ (docs/jupyterhub.md)", file=sys.stderr)
