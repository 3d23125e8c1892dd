"""MCP around the protocol core (`navmcp/protocol.py`): the wire's JSON and faults, the two tools and
their session, resources, prompts, completion, subscriptions, the page inside the chat, the stdio
transport and stored HTTP sessions."""
