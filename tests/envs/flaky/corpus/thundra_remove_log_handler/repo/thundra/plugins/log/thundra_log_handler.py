import logging

from thundra.context import get_execution_context


class ThundraLogHandler(logging.Handler):
    """Writes each record into the current invocation's execution context."""

    def emit(self, record):
        get_execution_context().logs.append(
            {"logContextName": record.name, "logMessage": record.getMessage(),
             "logLevel": record.levelname}
        )
