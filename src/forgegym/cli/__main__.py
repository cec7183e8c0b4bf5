"""``python -m forgegym.cli``: the ``forgegym`` command."""

from forgegym.cli import main

raise SystemExit(main())
