import os
from dataclasses import dataclass

PROVIDER_ENV_VARS = ("HERMES_API_KEY", "OPENROUTER_API_KEY")


@dataclass
class Executor:
    provider: str
    key: str


def create_executor():
    """An executor for the first provider whose key is set; ValueError if none is."""
    for var in PROVIDER_ENV_VARS:
        if os.environ.get(var):
            return Executor(var.split("_")[0].lower(), os.environ[var])
    raise ValueError("no provider key configured")
