from pixeltable.sample import sample_fraction


class TestSample:
    def test_sample_basic_f(self):
        rows = sample_fraction(list(range(100)), 0.5)
        assert 47 <= len(rows) <= 53
        assert rows == sorted(set(rows))
