"""The adversarial suite's helpers: transports to drive (drivers), frame generators and the
JSON-RPC oracle (fuzz), a world of users and items (world), a markdown structure checker
(markdown), and the long run (`python -m tests.adversarial.longrun`).

The pytest files are `tests/test_adv_*.py`; they import these modules as `adversarial.*`.
"""
