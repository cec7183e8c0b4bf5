from pennylane.devices import sample_expval


def test_finite_shot_expval():
    estimate = sample_expval(shots=60)
    assert abs(estimate - 0.0) < 0.2
