import sys

if sys.argv[1:2] == ["live"]:  # python -m bench live …: live pages (bench/live.py)
    from bench.live import main

    sys.exit(main(sys.argv[2:]))

from bench.run import main

sys.exit(main())
