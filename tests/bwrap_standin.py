"""A stand-in for the bubblewrap of Ubuntu 22.04 (0.6.1), made from the real one: it rejects what
0.6 rejects (--size; --perms before --tmpfs), says it is 0.6.1, and passes everything else on."""

from __future__ import annotations

import shutil
from pathlib import Path

REJECTED_PERMS = "bwrap: --perms must be followed by an option that creates a file"

SCRIPT = """\
#!/bin/sh
# bubblewrap 0.6.1 as far as option parsing goes; everything it accepts runs the real {real}.
case "$1" in
    --version) echo "bubblewrap 0.6.1"; exit 0 ;;
    --help) {real} --help | grep -v -e '--size' -e '--perms OCTAL.*tmpfs'; exit 0 ;;
esac
after_perms=0
for arg in "$@"; do
    if [ "$arg" = "--size" ]; then echo "bwrap: Unknown option --size" >&2; exit 1; fi
    if [ "$after_perms" = 1 ] && [ "$arg" = "--tmpfs" ]; then echo "{rejected}" >&2; exit 1; fi
    if [ "$after_perms" -gt 0 ]; then after_perms=$((after_perms - 1)); fi
    if [ "$arg" = "--perms" ]; then after_perms=2; fi
done
exec {real} "$@"
"""


def write_bwrap_06(folder: Path) -> Path:
    """Writes `folder`/bwrap (the stand-in) and returns `folder`, to put first on PATH."""
    real = shutil.which("bwrap")
    if real is None:
        raise RuntimeError("the stand-in needs the real bwrap")
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "bwrap"
    script.write_text(SCRIPT.format(real=real, rejected=REJECTED_PERMS))
    script.chmod(0o755)
    return folder
