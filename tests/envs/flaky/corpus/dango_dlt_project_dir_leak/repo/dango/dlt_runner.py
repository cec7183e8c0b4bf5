import os


def _run_dlt_source(project_dir, source):
    """Load ``source`` with dlt rooted at ``project_dir`` (dlt reads the variable)."""
    os.environ["DLT_PROJECT_DIR"] = project_dir
    return f"loaded {source} into {os.path.basename(project_dir)}"


def run_dir():
    """dlt's run directory: DLT_PROJECT_DIR, else the working directory."""
    return os.environ.get("DLT_PROJECT_DIR") or os.getcwd()
