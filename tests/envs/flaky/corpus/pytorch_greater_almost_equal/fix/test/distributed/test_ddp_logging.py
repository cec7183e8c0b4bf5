from torch.ddp_logging import average
from torch.testing.common_utils import assert_greater_almost_equal

COMPUTE = [0.1, 0.7, 0.3, 0.2, 0.13, 0.011]
COMM = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # no overlap measured in this run


def test_avg_time_at_least_compute_time():
    avg_compute = average(COMPUTE)
    avg_total = average(c + m for c, m in zip(COMPUTE, COMM))
    assert_greater_almost_equal(avg_total, avg_compute)
