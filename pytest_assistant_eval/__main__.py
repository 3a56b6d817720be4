from pytest_assistant_eval.cli import main

raise SystemExit(main())
