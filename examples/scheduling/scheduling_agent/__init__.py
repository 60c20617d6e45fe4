"""A small, deterministic scheduling agent used to demonstrate checkweigh.

It stands in for an LLM agent: it reads a natural-language request, calls calendar tools and
replies. Its parser has deliberate, realistic limitations (see the example's README), so that an
evaluation run shows every outcome class.
"""
