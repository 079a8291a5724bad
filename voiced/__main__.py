from voiced.cli import main

raise SystemExit(main())
