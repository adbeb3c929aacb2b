"""``python -m mjenv``: the ``mjenv`` command."""

from .cli import main

raise SystemExit(main())
