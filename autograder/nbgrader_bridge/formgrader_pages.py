"""formgrader's own pages with every value they are given escaped.

nbgrader 0.9.6's formgrader renders its pages (gradebook, manage students, manage submissions, the
error pages) from Jinja templates without autoescaping, and writes the ids of the URL's path into
them as they are: `<base>/formgrader/gradebook/<img src=x onerror=...>` ran its script as the TA's
logged-in Jupyter session (its API, its terminals, every course's gradebook), a link any student
can send a TA ("my grade looks wrong: <link>"). Its handlers render through one method
(`BaseHandler.render`): that method gets an autoescaping overlay of formgrader's Jinja environment,
so every value is text wherever a template quotes it (in a `<script>` string too: no `<` or `"`
survives to end it).

Its API (`/formgrader/api/...`) answers GET with JSON that quotes the ids of its URL (an unknown
student's submission is `{"student": <the id>, ...}`), written as a string, which tornado sends as
text/html: the same link to `/formgrader/api/submission/<assignment>/<img src=x onerror=...>` ran
as the TA's session; so did `/nbgrader_version?version=<...>` of nbgrader's assignment list
extension in the same server. Every answer of the API, and of nbgrader's other extensions there
(assignment list, course list, validate), is sent as plain text, never sniffed: no browser
renders it, and formgrader's own scripts read it as before (they JSON.parse a string; jQuery would
parse an `application/json` answer itself and their JSON.parse of an object failed).

The view of a submission is nbconvert's page (`templates/formgrade/formgrade_macros.html.j2` of
this kit escapes the student's name there). Applied by nbgrader_config.py when formgrader's server
reads it; nothing to do in any other process.
"""

from __future__ import annotations

import sys

BASE = "nbgrader.server_extensions.formgrader.base"
ESCAPING_ENV = "cs349e_escaping_jinja2_env"
API_TYPE = "text/plain; charset=UTF-8"   # see above: not application/json


def _escaping_render(self, name, **ns):
    env = self.settings.get(ESCAPING_ENV)
    if env is None:
        # an overlay: formgrader's loader and settings, its own template cache, autoescaping on
        env = self.settings[ESCAPING_ENV] = self.settings["nbgrader_jinja2_env"].overlay(autoescape=True)
    return env.get_template(name).render(**ns)


def _plain_headers(default_headers):
    def set_default_headers(self):
        default_headers(self)
        # (tornado resets its headers through here: an error's answer is sent so too)
        self.set_header("Content-Type", API_TYPE)
        self.set_header("X-Content-Type-Options", "nosniff")
    set_default_headers.plain_answers = True
    return set_default_headers


def escape_formgrader_pages() -> bool:
    """Make formgrader's page rendering escape every value, and its API answer as plain text, if formgrader
    is loaded in this process (True then). Idempotent."""
    base = sys.modules.get(BASE)
    if base is None:
        return False
    base.BaseHandler.render = _escaping_render
    for handler in _json_answering_handlers(base):
        if not getattr(handler.set_default_headers, "plain_answers", False):
            handler.set_default_headers = _plain_headers(handler.set_default_headers)
    return True


def _json_answering_handlers(base) -> list:
    """formgrader's API and the handlers of nbgrader's other extensions in the same server, which all
    answer JSON written as a string (the assignment list's /nbgrader_version?version=<...> quoted its
    argument in the message it answered)."""
    from nbgrader.server_extensions.assignment_list import handlers as assignment_list
    from nbgrader.server_extensions.course_list import handlers as course_list
    from nbgrader.server_extensions.validate_assignment import handlers as validate

    return [base.BaseApiHandler, assignment_list.BaseAssignmentHandler, course_list.CourseListHandler,
            course_list.NbGraderVersionHandler, validate.ValidateAssignmentHandler, validate.NbGraderVersionHandler]
