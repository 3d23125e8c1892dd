"""A grouped vote's own work, with nothing of navmcp's around it.

    .venv/bin/python -m bench.vote_work --size 1000     # in-process, in turn with navmcp's vote

A pipelined vote in navmcp is `vote:group` (see `bench.instructions`): decode the request, run
the tool and the action through the protocol core, the tool session, the workspace, the page
table and the action table, encode the reply. Its own work is only what any server answering that
vote must: decode the frame, validate the ballots with the same pydantic model, run the same
statements in a savepoint of the group's transaction (the page's resolve, the options, the
upsert, the audit row), and encode a reply of the same shape. What navmcp adds above it is the
dispatch, the argument checks, the request and its rows as dicts, the rules of every action on
the page, the handler's bookkeeping and the audit's: `vote:group` − `vote:work` in instructions
(`bench.instructions`, which cannot be moved by the machine's load), and the ratio of the two
here, measured group by group in turn so that both see the same moments of a noisy machine.
"""

from __future__ import annotations

import statistics
import sys
import time

from bench.profile import connected, frame, seeded_workspace

GROUP = 64  # votes per group, as `navmcp.mcp.stdio.MAX_GROUP` groups a pipelining client's


def work_group(app, fx, message: bytes, group: int = GROUP):
    """A function running `group` votes (each the frame `message`) as their own work: one
    BEGIN IMMEDIATE ... COMMIT around them, a savepoint each. Returns the last reply."""
    from navmcp.actions.decisions import _UPSERT_VOTES, Vote
    from navmcp.clock import now
    from navmcp.content.domain import OPTIONS_SQL
    from navmcp.mcp.codec import decode, encode
    from navmcp.pages.items import _RESOLVE_SQL
    from navmcp.workspace import AUDIT_SQL

    cursor = app.store.cursor
    uid = app.principal(None).user_id
    _, _, studio, _, item = fx.vote_url.split("/")
    resolve = _RESOLVE_SQL["decision"]

    def vote(data: bytes) -> bytes:
        msg = decode(data)
        arguments = msg["params"]["arguments"]
        ballots = Vote.model_validate(arguments["params"]).votes
        cursor.execute("SAVEPOINT work")
        found = cursor.execute(resolve, (uid, item, "decision", studio)).fetchone()
        by_title = {o[1]: o for o in cursor.execute(OPTIONS_SQL, (uid, item)).fetchall()}
        stamp, values = now(), []
        for ballot in ballots:
            values += (item, by_title[ballot.option][0], uid, int(ballot.accept), int(ballot.prefer), stamp)
        cursor.execute(_UPSERT_VOTES[len(ballots)], values)
        cursor.execute(AUDIT_SQL, (stamp, uid, "work", found[0], arguments["url"], "vote", '["votes"]', "ok", 0.0))
        cursor.execute("RELEASE work")
        message = "Vote replaced: 'March 3': accept."
        actions = ["add_comment", "delete_comment", "add_option", "vote", "close_decision", "remind", "edit_decision",
                   "extend_decision", "attach"]
        text = f"✓ {message}\nURL: {arguments['url']}\nAvailable there now: {', '.join(actions)}\n"
        return encode({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"ok": True, "message": message, "url": arguments["url"], "actions": actions},
            "isError": False}})

    def run() -> bytes:
        cursor.execute("BEGIN IMMEDIATE")
        try:
            for _ in range(group):
                reply = vote(message)
            cursor.execute("COMMIT")
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        return reply

    return run


def vote_frame(fx) -> bytes:
    return frame("execute_action", {"action": "vote", "url": fx.vote_url,
                                    "params": {"votes": [{"option": "March 3", "accept": True}]}})


def main(argv: list[str] | None = None) -> int:
    args, fx = seeded_workspace("python -m bench.vote_work", __doc__, argv)
    app, conn, _ = connected("vote_work")
    message = vote_frame(fx)
    if b'"isError":false' not in conn.receive_bytes(message):
        raise SystemExit("navmcp's vote failed")

    def navmcp_group() -> None:
        with conn.group():
            for _ in range(GROUP):
                conn.receive_bytes(message)

    runs = {"navmcp": navmcp_group, "work": work_group(app, fx, message)}
    for run in runs.values():  # warm-up
        for _ in range(5):
            run()
    if runs["work"]() != conn.receive_bytes(message):  # the same reply, byte for byte
        raise SystemExit("the vote's own work answers differently from navmcp")
    per_vote: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.calls):
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            per_vote[name].append((time.perf_counter() - started) / GROUP * 1e6)
    print(f"{args.size:,} items, {args.calls} groups of {GROUP} votes each, in turn; µs per vote")
    for name, values in per_vote.items():
        ordered = sorted(values)
        print(f"{name:<8} median {statistics.median(values):7.1f}   fastest tenth {ordered[len(ordered) // 10]:7.1f}")
    ratios = sorted(n / w for n, w in zip(per_vote["navmcp"], per_vote["work"]))
    print(f"navmcp ÷ own work, group by group: median {statistics.median(ratios):.2f} "
          f"(tenth {ratios[len(ratios) // 10]:.2f}, ninetieth {ratios[len(ratios) * 9 // 10]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
