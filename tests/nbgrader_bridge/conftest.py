import pytest

from process_state import process_state_restored


@pytest.fixture
def isolated_process_state():
    with process_state_restored():
        yield
