import sys

from benchkill.cli.main import main

sys.exit(main())
