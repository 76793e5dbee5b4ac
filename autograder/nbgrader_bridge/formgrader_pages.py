"""formgrader's own pages with every value they are given escaped.

nbgrader 0.9.6's formgrader renders its pages (gradebook, manage students, manage submissions, the
error pages) from Jinja templates without autoescaping, and writes the ids of the URL's path into
them as they are: `<base>/formgrader/gradebook/<img src=x onerror=...>` ran its script as the TA's
logged-in Jupyter session (its API, its terminals, every course's gradebook), a link any student
can send a TA ("my grade looks wrong: <link>"). Its handlers render through one method
(`BaseHandler.render`): that method gets an autoescaping overlay of formgrader's Jinja environment,
so every value is text wherever a template quotes it (in a `<script>` string too: no `<` or `"`
survives to end it).

The view of a submission is nbconvert's page (`templates/formgrade/formgrade_macros.html.j2` of
this kit escapes the student's name there). Applied by nbgrader_config.py when formgrader's server
reads it; nothing to do in any other process.
"""

from __future__ import annotations

import sys

BASE = "nbgrader.server_extensions.formgrader.base"
ESCAPING_ENV = "cs349e_escaping_jinja2_env"


def _escaping_render(self, name, **ns):
    env = self.settings.get(ESCAPING_ENV)
    if env is None:
        # an overlay: formgrader's loader and settings, its own template cache, autoescaping on
        env = self.settings[ESCAPING_ENV] = self.settings["nbgrader_jinja2_env"].overlay(autoescape=True)
    return env.get_template(name).render(**ns)


def escape_formgrader_pages() -> bool:
    """Make formgrader's page rendering escape every value, if formgrader is loaded in this process
    (True then). Idempotent."""
    base = sys.modules.get(BASE)
    if base is None:
        return False
    base.BaseHandler.render = _escaping_render
    return True
