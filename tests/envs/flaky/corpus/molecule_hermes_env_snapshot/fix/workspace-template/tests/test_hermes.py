import os

import pytest

from adapters.hermes import PROVIDER_ENV_VARS, create_executor


def test_create_executor_raises_without_keys():
    with pytest.raises(ValueError):
        create_executor()


class TestHermesProviders:
    @pytest.fixture(autouse=True)
    def _clean_env(self):
        saved = {k: os.environ.get(k) for k in PROVIDER_ENV_VARS}
        for k in PROVIDER_ENV_VARS:
            os.environ.pop(k, None)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    def test_hermes_key(self):
        os.environ["HERMES_API_KEY"] = "hermes-test-key"
        assert create_executor().provider == "hermes"

    def test_openrouter_key(self, monkeypatch):
        monkeypatch.setenv("OPENROUTER_API_KEY", "or-key")
        assert create_executor().key == "or-key"
