#!/usr/bin/env bash
# Build the documentation site offline into docs/_build/html (open docs/_build/html/index.html).
# Any warning fails the build: a broken cross-reference or link, a page left out of the
# navigation, a missing include. Needs the docs extra (pip install -e '.[docs]') and
# graphviz's `dot` for the diagrams (Debian: apt-get install graphviz). Extra arguments go to
# sphinx-build (e.g. -b linkcheck).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v dot >/dev/null; then
    echo "build_docs.sh: graphviz's dot draws the diagrams: apt-get install graphviz" >&2
    exit 2
fi
if ! python -c "import sphinx, myst_parser, furo, numpydoc" 2>/dev/null; then
    echo "build_docs.sh: the site needs the docs extra in this Python: pip install -e '.[docs]'" >&2
    exit 2
fi
python -m sphinx -W --keep-going -q -b html docs docs/_build/html "$@"
echo "built docs/_build/html/index.html"
