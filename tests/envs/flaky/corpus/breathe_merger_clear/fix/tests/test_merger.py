from breathe import Breathe


def test_global_extras():
    Breathe.clear()
    Breathe.add_global_extras("n")
    assert Breathe.global_extras == ["n"]


def test_add_commands():
    Breathe.clear()
    Breathe.add_global_extras("text")
    Breathe.add_commands(None, {"test": "x"})
    assert Breathe.contexts[None] == {"test": "x"}
