import logging

LOG = logging.getLogger("bzt")


def setup_logging(stream):
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    LOG.propagate = False
    return handler


def run(stream):
    setup_logging(stream)
    LOG.info("starting")
    return 0
