"""The demo walkthrough drives the real bin/mcp-server over stdio and creates what it says."""

from navmcp.demo import walkthrough


def test_demo_walkthrough_creates_items(home, capsys):
    created = walkthrough.run(home, say=lambda line: None)
    assert set(created) == {"note", "decision", "commitment"}
    assert created["decision"].startswith("/studios/demo/d/")
