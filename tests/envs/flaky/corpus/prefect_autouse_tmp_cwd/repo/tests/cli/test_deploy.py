import os

from prefect.cli import deploy, init_project


def test_init_creates_prefect_yaml():
    assert init_project("flows") == "created"
    with open("prefect.yaml", encoding="utf-8") as handle:
        assert handle.read() == "name: flows\n"


def test_deploy_records_flow(flow_name):
    assert deploy(flow_name) == "etl"
    assert os.path.exists("prefect.yaml")
