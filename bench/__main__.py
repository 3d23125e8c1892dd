import sys

if sys.argv[1:2] == ["live"]:  # python -m bench live …: live pages (bench/live.py)
    from bench.live import main

    sys.exit(main(sys.argv[2:]))

if sys.argv[1:2] == ["fairness"]:  # python -m bench fairness …: another user's latency under attack
    from bench.fairness import main

    sys.exit(main(sys.argv[2:]))

from bench.run import main

sys.exit(main())
