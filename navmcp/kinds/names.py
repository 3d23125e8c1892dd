"""The decision kinds' names, importing nothing: `navmcp.content.search` reads them (`kind:`) below the
store, which `navmcp.kinds` and its modules are above."""

DEFAULT = "acceptance"
NAMES = ("acceptance", "consent", "dots", "times")  # create_decision's `kind`; each a module in navmcp.kinds
