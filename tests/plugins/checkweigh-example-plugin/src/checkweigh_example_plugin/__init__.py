"""checkweigh's example plugin: one check type, judge provider, target kind, log format,
executor and report output, each in its own module and declared in pyproject.toml."""
