from ripe.atlas.probes import render


def test_probe_table():
    probes = {1: "NL", 2: "DE", 3: "GR"}
    assert render(probes) == "1 NL\n2 DE\n3 GR\n"
