def add_imports(source, modules):
    """``source`` with an ``import m`` line for each of ``modules`` it lacks, inserted
    after the existing imports, in sorted order."""
    lines = source.splitlines()
    present = {line.split()[1] for line in lines if line.startswith("import ")}
    missing = set(modules) - present
    at = max((i + 1 for i, line in enumerate(lines) if line.startswith("import ")), default=0)
    new = [f"import {m}" for m in missing]
    return "\n".join(lines[:at] + new + lines[at:]) + "\n"
