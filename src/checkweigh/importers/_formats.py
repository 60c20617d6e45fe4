"""The built-in log formats: name -> ``module:class`` (relative to this package).

The standard library only, so the command line's help can list them without importing a
format (or a plugin).
"""

BUILTIN_FORMATS: dict[str, str] = {
    "openai": "._openai:OpenAIFormat",
    "openai-responses": "._responses:ResponsesFormat",
    "anthropic": "._anthropic:AnthropicFormat",
    "otel": "._otel:OtelFormat",
    "mapping": "._mapping:MappingFormat",
}
"""Each built-in format and where it is; other packages add theirs through the entry-point
group ``checkweigh.formats`` (see :data:`~checkweigh.importers.FORMATS`)."""
