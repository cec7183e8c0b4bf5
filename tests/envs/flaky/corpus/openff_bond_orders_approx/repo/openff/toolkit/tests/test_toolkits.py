import pytest

from openff.toolkit.wrappers import fractional_bond_orders

CONTRIBUTIONS = [
    [0.1, 0.2, 0.3, 0.4, 0.05, 0.0125],
    [0.7, 0.11, 0.013, 0.0017, 0.19],
]


class TestAmberToolsToolkitWrapper:
    def test_assign_fractional_bond_orders(self):
        expected = [sum(parts) for parts in CONTRIBUTIONS]
        bond_orders = fractional_bond_orders(CONTRIBUTIONS)
        assert bond_orders == expected
