import unittest

from qiskit.quantum_info.expectation import expectation_value


class TestExpectation(unittest.TestCase):
    def test_expectation_value(self):
        counts = {"00": 3, "01": 1, "10": 1, "11": 2}
        values = {"00": 0.1, "01": 0.7, "10": 0.3, "11": -0.9}
        value = expectation_value(counts, values)
        self.assertEqual(value, -0.5 / 7)
