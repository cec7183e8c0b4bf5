import contextlib
import os


@contextlib.contextmanager
def Chdir(dirname, create=True):
    if not os.path.exists(dirname):
        if not create:
            raise OSError("Cannot find directory %s" % dirname)
        os.mkdir(dirname)
    previous_directory = os.getcwd()
    os.chdir(dirname)
    yield
    os.chdir(previous_directory)
