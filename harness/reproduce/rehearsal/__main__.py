import sys

from harness.reproduce.rehearsal.pipeline import main

sys.exit(main())
