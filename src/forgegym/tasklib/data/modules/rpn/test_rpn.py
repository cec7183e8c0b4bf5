import pytest

from rpn import eval_rpn, evaluate, to_rpn, tokenize


def test_tokenize():
    assert tokenize("12+(3*4)") == ["12", "+", "(", "3", "*", "4", ")"]


def test_to_rpn():
    assert to_rpn(tokenize("1+2*3")) == ["1", "2", "3", "*", "+"]
    assert to_rpn(tokenize("8-3-2")) == ["8", "3", "-", "2", "-"]


def test_eval_rpn():
    assert eval_rpn(["7", "2", "/"]) == 3


def test_evaluate():
    assert evaluate("(1+2)*(7-3)") == 12
    assert evaluate("20/3/2") == 3


def test_errors():
    with pytest.raises(ValueError):
        evaluate("(1+2")
    with pytest.raises(ValueError):
        eval_rpn(["1", "+"])
