from navmcp.cli import main

raise SystemExit(main())
