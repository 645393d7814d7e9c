import sys

from harness.rehearsal.pipeline import main

sys.exit(main())
