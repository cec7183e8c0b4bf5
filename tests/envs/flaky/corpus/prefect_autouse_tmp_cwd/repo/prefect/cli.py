import os


def init_project(name):
    """Create ``prefect.yaml`` in the working directory; ``exists`` if it is there."""
    if os.path.exists("prefect.yaml"):
        return "exists"
    with open("prefect.yaml", "w", encoding="utf-8") as handle:
        handle.write(f"name: {name}\n")
    return "created"


def deploy(flow_name):
    """Record a deployment of ``flow_name`` in ``prefect.yaml`` (created if needed)."""
    with open("prefect.yaml", "a", encoding="utf-8") as handle:
        handle.write(f"deployment: {flow_name}\n")
    return flow_name
