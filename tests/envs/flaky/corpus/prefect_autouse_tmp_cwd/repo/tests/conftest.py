import pytest


@pytest.fixture
def flow_name():
    return "etl"
