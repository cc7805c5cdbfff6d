import sys

from recover_core.cli import main

sys.exit(main())
