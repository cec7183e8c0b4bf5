from word_freq import counts, hapaxes, top_k, words


def test_words():
    assert words("Don't stop, DON'T!") == ["don't", "stop", "don't"]


def test_counts():
    assert counts("a b a") == {"a": 2, "b": 1}


def test_top_k():
    assert top_k("b a c b a b", 2) == [["b", 3], ["a", 2]]
    assert top_k("x y", 5) == [["x", 1], ["y", 1]]


def test_hapaxes():
    assert hapaxes("c a b a") == ["b", "c"]
