import os


class Config:
    def __init__(self):
        py = os.environ.get("CONDA_PY")
        self.python = f"{py[0]}.{py[1:]}" if py else "3.11"
