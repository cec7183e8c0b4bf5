class ExecutionContext:
    def __init__(self):
        self.logs = []


_current = ExecutionContext()


def reset_execution_context():
    global _current
    _current = ExecutionContext()
    return _current


def get_execution_context():
    return _current
