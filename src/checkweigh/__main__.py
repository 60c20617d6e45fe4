"""``python -m checkweigh``: the same as the ``checkweigh`` command."""

from .cli import main

main()
