"""``python -m executor ...`` is the same as the ``executor`` command."""

import sys

from executor.cli import main

sys.exit(main())
