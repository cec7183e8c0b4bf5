import logging

LOG = logging.getLogger("bzt")


def setup_logging(stream):
    for old in [h for h in LOG.handlers if getattr(h, "_bzt", False)]:
        LOG.removeHandler(old)
    handler = logging.StreamHandler(stream)
    handler._bzt = True
    handler.setFormatter(logging.Formatter("%(message)s"))
    LOG.addHandler(handler)
    LOG.setLevel(logging.INFO)
    LOG.propagate = False
    return handler


def run(stream):
    setup_logging(stream)
    LOG.info("starting")
    return 0
