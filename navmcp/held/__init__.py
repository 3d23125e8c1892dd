"""Held actions: an agent's write that waits for a person's approval.

A studio's admins set rules for the studio, and each member for their own agents (`rules`), in the
browser only. A write a rule covers is validated as any other, then stored with its exact params, a
preview of what it would do (run and rolled back) and its target's version (`hold`); the agent is
told "not done yet" and where to watch. The held pages list and show them (`pages`); approving,
rejecting and withdrawing are actions of the held page (`approval`), and the last approval re-checks
the whole action as the requester, on fresh data, and runs it in the same transaction.
"""
