"""Keep what a server process loads to what it uses.

pydantic discovers plugins (entry points in the `pydantic` group) when the first model is built:
it imports `importlib.metadata` — with `email`, `zipfile`, `csv`, `socket`, `calendar` behind it —
and reads the metadata of every installed distribution. For navmcp, which uses no pydantic plugin,
that is ~4 MiB of the server's ~37 MiB and ~25 ms of its first tool call.

`skip_pydantic_plugin_discovery()` answers pydantic's "which plugins?" with "none" without that
import, unless the environment says otherwise: with `PYDANTIC_DISABLE_PLUGINS` set to anything
(e.g. empty, which lets pydantic load them all, or a list of names) pydantic decides as usual.
It changes nothing once pydantic has looked (e.g. in a process that imported the MCP SDK first).
"""

from __future__ import annotations

import os
import sys
import types

_LOADER = "pydantic.plugin._loader"


def skip_pydantic_plugin_discovery() -> bool:
    """True when pydantic will see no plugins without importing importlib.metadata."""
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ or _LOADER in sys.modules:
        return False
    loader = types.ModuleType(_LOADER, "navmcp: pydantic plugin discovery skipped (see navmcp/lean.py)")
    loader.get_plugins = lambda: ()  # type: ignore[attr-defined]  # what pydantic's own loader answers with PYDANTIC_DISABLE_PLUGINS=__all__
    sys.modules[_LOADER] = loader
    return True
