"""``python -m forgegym.play.fake_openai --help``: what it is, every option described
with its default."""

from __future__ import annotations

import pytest

from forgegym.play.fake_openai import MODELS, main


def test_help_describes_the_server_and_every_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "OpenAI-compatible" in out and all(model in out for model in MODELS)
    for option, default in (("--episodes", "5"), ("--port", "8011"), ("--latency", "0.0")):
        line = next(x for x in out.splitlines() if x.strip().startswith(option))
        assert f"(default: {default})" in line and len(line.split()) > 3, line
    assert "(default: None)" not in out
