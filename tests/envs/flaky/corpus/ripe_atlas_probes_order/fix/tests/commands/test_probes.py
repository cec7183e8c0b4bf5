from ripe.atlas.probes import render


def test_probe_table():
    probes = {1: "NL", 2: "DE", 3: "GR"}
    assert set(render(probes).splitlines()) == {"1 NL", "2 DE", "3 GR"}
