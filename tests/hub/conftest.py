import pytest

from hub_machine import missing_requirements, start_hub


@pytest.fixture(scope="module")
def hub():
    reason = missing_requirements()
    if reason:
        pytest.skip(f"the hub test {reason}")
    machine = start_hub()
    try:
        yield machine
    finally:
        machine.close()
