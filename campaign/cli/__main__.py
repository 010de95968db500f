"""`python -m campaign.cli`: the `campaign` command."""

import sys

from campaign.cli.main import main

sys.exit(main())
