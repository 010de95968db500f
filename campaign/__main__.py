"""`python -m campaign` is the `campaign` command, for environments without its script."""

import sys

from campaign.cli.main import main

sys.exit(main())
