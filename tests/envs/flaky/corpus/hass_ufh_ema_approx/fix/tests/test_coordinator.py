import pytest

from custom_components.ufh_controller.coordinator import Coordinator


def test_coordinator_save_state_format():
    coordinator = Coordinator()
    for _ in range(3):
        coordinator.async_refresh(21.5)
    state = coordinator.save_state()
    assert set(state) == {"ema_temp"}
    assert state["ema_temp"] == pytest.approx(21.5)
