from meetings import free_slots, max_non_overlapping, rooms_needed


def test_max_non_overlapping():
    assert max_non_overlapping([[1, 3], [2, 4], [3, 5]]) == 2
    assert max_non_overlapping([]) == 0


def test_rooms_needed():
    assert rooms_needed([[0, 30], [5, 10], [15, 20]]) == 2
    assert rooms_needed([[1, 2], [2, 3]]) == 1


def test_free_slots():
    assert free_slots([[9, 10], [12, 13]], 8, 14) == [[8, 9], [10, 12], [13, 14]]
    assert free_slots([[7, 15]], 8, 14) == []
