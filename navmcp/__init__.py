"""navmcp: a team workspace that agents and people use through the same URLs."""

__version__ = "0.1.0"
