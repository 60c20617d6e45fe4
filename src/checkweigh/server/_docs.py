"""The API's docs page: Swagger UI from the ``swagger-ui-bundle`` package, served by the process
itself (no CDN at run time), started by a script file rather than an inline one."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

_OWN = Path(__file__).parent / "static"
_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>checkweigh API</title>
<link rel="stylesheet" href="/static/swagger/swagger-ui.css">
<link rel="icon" href="/static/swagger/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/static/swagger/swagger-ui-bundle.js"></script>
<script src="/static/docs.js"></script>
</body>
</html>
"""


def install(app: FastAPI) -> None:
    """Serve ``/docs`` and the files it loads under ``/static``."""
    app.mount("/static/swagger", StaticFiles(directory=swagger_ui_path), name="swagger")
    app.mount("/static", StaticFiles(directory=_OWN), name="static")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(_PAGE)
