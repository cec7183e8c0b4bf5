import shutil


def svn_executable():
    """The svn client on PATH (used to check out svn sources)."""
    exe = shutil.which("svn")
    if exe is None:
        raise RuntimeError("svn not found on PATH: install it or add it to the recipe")
    return exe
