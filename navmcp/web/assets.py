"""The web app's static files (`templates/static/`): each read once, served at a fingerprinted URL
and cached for a year."""

from __future__ import annotations

import functools
import hashlib

from navmcp.render import templates_dir

ASSET_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


@functools.cache
def _assets() -> dict[str, tuple[str, bytes, str]]:
    """name ('app.css') → (its fingerprinted URL, its bytes, its content type), read once."""
    found = {}
    for path in sorted((templates_dir() / "static").iterdir()):
        if path.suffix in ASSET_TYPES:
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()[:12]
            found[path.name] = (f"/static/{path.stem}.{digest}{path.suffix}", data, ASSET_TYPES[path.suffix])
    return found


def asset_url(name: str) -> str:
    return _assets()[name][0]


def asset(path: str) -> tuple[bytes, str] | None:
    """The bytes and type of the asset at a fingerprinted `path`; None for any other path (an old
    fingerprint too: what a year-long cache holds must never change under its URL)."""
    for url, data, kind in _assets().values():
        if url == path:
            return data, kind
    return None
