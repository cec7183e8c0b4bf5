def render(probes):
    """One line per probe: ``<id> <country>``; ``probes`` maps id -> country."""
    ids = {str(pid) for pid in probes}
    return "".join(f"{pid} {probes[int(pid)]}\n" for pid in ids)
