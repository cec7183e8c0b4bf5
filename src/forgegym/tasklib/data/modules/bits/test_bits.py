from bits import bit_positions, gray_code, is_power_of_two, popcount, reverse_bits


def test_popcount():
    assert popcount(0b101101) == 4
    assert popcount(0) == 0


def test_power_of_two():
    assert is_power_of_two(64)
    assert not is_power_of_two(0)
    assert not is_power_of_two(12)


def test_reverse_bits():
    assert reverse_bits(0b0011, 4) == 0b1100
    assert reverse_bits(1, 3) == 4


def test_gray_code():
    assert gray_code(2) == [0, 1, 3, 2]


def test_bit_positions():
    assert bit_positions(0b10110) == [1, 2, 4]
