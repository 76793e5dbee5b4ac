"""The courses of a hub, read from a TOML file (courses.toml, courses-two.toml): shared by
jupyterhub_config.py (groups, roles, formgrader services) and setup_hub.py (users, folders, env).

Plain Python 3.11 with no third-party import: the system's python3 runs setup_hub.py before the
hub's environment exists.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

# nbgrader's course and student ids end up in folder names and group names.
_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")


class CoursesError(ValueError):
    pass


@dataclass(frozen=True)
class Course:
    id: str
    grader: str
    port: int
    instructors: tuple[str, ...]
    tas: tuple[str, ...]
    students: tuple[str, ...]
    # student -> (first name, last name), as formgrader and the gradebook show them
    names: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return Path("/home") / self.grader

    @property
    def root(self) -> Path:
        """The course folder: a copy of the kit, owned by the grader user, closed to everyone else."""
        return self.home / self.id

    @property
    def formgraders(self) -> tuple[str, ...]:
        return self.instructors + self.tas


@dataclass(frozen=True)
class Hub:
    hub_env: Path
    state_dir: Path
    exchange: Path
    create_users: bool
    admins: tuple[str, ...]
    courses: tuple[Course, ...] = field(default_factory=tuple)
    # Each user's server on its own subdomain of this address (user_origins.py), or none
    # and every server on the hub's origin, which the file must say it accepts.
    subdomain_host: str | None = None
    shared_origin_accepted: bool = False

    def users(self) -> list[str]:
        """Every person who logs in (not the grader users, which run the services)."""
        names = list(self.admins)
        for course in self.courses:
            names += [*course.instructors, *course.tas, *course.students]
        return list(dict.fromkeys(names))


def _name(value, what: str) -> str:
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise CoursesError(f"{what}: {value!r} is not a valid name (lower-case letters, digits and '-', "
                           f"starting with a letter, at most 32 characters)")
    return value


def _names(table: dict, key: str, where: str) -> tuple[str, ...]:
    values = table.get(key, [])
    if not isinstance(values, list):
        raise CoursesError(f"{where}: {key} must be a list of user names")
    return tuple(_name(v, f"{where}.{key}") for v in values)


def _person(value, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 64 or not value.isprintable():
        raise CoursesError(f"{what}: {value!r} is not a name (printable text, at most 64 characters)")
    return value.strip()


def _student_names(table: dict, students: tuple[str, ...], where: str) -> dict[str, tuple[str, str]]:
    """[course.names]: `alice = { first = "晓雯", last = "李" }` for each student who has one."""
    names = table.get("names", {})
    if not isinstance(names, dict):
        raise CoursesError(f"{where}: names must be a table of student = {{ first = ..., last = ... }}")
    out = {}
    for student, name in names.items():
        if student not in students:
            raise CoursesError(f"{where}.names: {student!r} is not one of the course's students")
        if not isinstance(name, dict) or set(name) != {"first", "last"}:
            raise CoursesError(f"{where}.names.{student}: give {{ first = ..., last = ... }}")
        out[student] = (_person(name["first"], f"{where}.names.{student}.first"),
                        _person(name["last"], f"{where}.names.{student}.last"))
    return out


def load_hub(path: str | Path) -> Hub:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise CoursesError(f"{path}: {err}") from None
    courses = []
    for i, table in enumerate(data.get("course", [])):
        where = f"{path.name}: course[{i}]"
        port = table.get("port")
        if not isinstance(port, int) or not 1024 <= port <= 65535:
            raise CoursesError(f"{where}: port must be a number from 1024 to 65535, not {port!r}")
        students = _names(table, "students", where)
        courses.append(Course(id=_name(table.get("id"), f"{where}.id"), grader=_name(table.get("grader"), f"{where}.grader"),
                              port=port, instructors=_names(table, "instructors", where),
                              tas=_names(table, "tas", where), students=students,
                              names=_student_names(table, students, where)))
    if not courses:
        raise CoursesError(f"{path}: no [[course]] table")
    for key in ("id", "grader", "port"):
        values = [getattr(c, key) for c in courses]
        if len(set(values)) != len(values):
            raise CoursesError(f"{path}: two courses share a {key}")
    return Hub(hub_env=Path(data.get("hub_env", "/opt/cs349e-hub/venv")),
               state_dir=Path(data.get("state_dir", "/srv/jupyterhub")),
               exchange=Path(data.get("exchange", "/srv/nbgrader/exchange")),
               create_users=bool(data.get("create_users", False)),
               admins=_names(data, "admins", path.name), courses=tuple(courses),
               subdomain_host=_subdomain_host(data.get("subdomain_host"), path.name),
               shared_origin_accepted=_shared_origin(data.get("shared_origin", "refuse"), path.name))


def _subdomain_host(value, where: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or not re.fullmatch(r"https?://[a-z0-9.-]+(:[0-9]+)?", value):
        raise CoursesError(f"{where}: subdomain_host must be an address like \"https://hub.example.edu\", not {value!r}")
    return value


def _shared_origin(value, where: str) -> bool:
    if value not in ("refuse", "accept"):
        raise CoursesError(f"{where}: shared_origin must be \"refuse\" or \"accept\", not {value!r}")
    return value == "accept"
