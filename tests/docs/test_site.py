"""The documentation site: it builds offline with every warning an error (a broken
cross-reference, a page left out of the navigation), its generated reference shows every
command, option, model and param the code has, every internal link and image of the built
pages leads somewhere, and a real browser (Debian's headless chromium) renders its navigation
and a search's results (search runs in JavaScript)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

import reference_pages  # noqa: E402  (docs/_ext is no package)

BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",  # the tests may run as root
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--virtual-time-budget=10000",  # let the page's scripts finish: virtual time, not a clock
]
PARTS = ["Tutorials", "How-to guides", "Reference", "Explanation"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as scripts/build_docs.sh builds it (warnings as errors), into a folder of the
    test's own."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        capture_output=True, text=True, timeout=900, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return out / "html"


class Page(HTMLParser):
    """What a built page holds: its element ids, its links and image sources, its text."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.targets: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if "id" in attributes:
            self.ids.add(attributes["id"])
        if tag == "a" and attributes.get("href"):
            self.targets.append(attributes["href"])
        if tag in ("img", "script") and attributes.get("src"):
            self.targets.append(attributes["src"])
        if tag == "link" and attributes.get("href"):
            self.targets.append(attributes["href"])

    def handle_data(self, data):
        self.text.append(data)


def parsed(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text())
    return page


def broken_links(html: Path) -> list[str]:
    """Every link or source of the site's pages that leads to no file, or to no element of
    the page it names (`page.html#id`); links out of the site (a scheme) are left alone."""
    pages = {path: parsed(path) for path in html.rglob("*.html")}
    broken = []
    for path, page in pages.items():
        for target in page.targets:
            parts = urlsplit(target)
            if parts.scheme or target.startswith("//"):
                continue
            file = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if not file.exists():
                broken.append(f"{path.relative_to(html)}: {target} (no such file)")
            elif parts.fragment and file.suffix == ".html":
                ids = pages[file].ids if file in pages else parsed(file).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(html)}: {target} (no such anchor)")
    return broken


def test_broken_links_finds_a_missing_page_and_a_missing_anchor(tmp_path):
    (tmp_path / "a.html").write_text(
        '<p id="here"><a href="b.html">b</a> <a href="a.html#here">ok</a> '
        '<a href="a.html#gone">gone</a> <img src="missing.png"> <a href="https://x.org">x</a></p>'
    )
    assert broken_links(tmp_path) == [
        "a.html: b.html (no such file)",
        "a.html: a.html#gone (no such anchor)",
        "a.html: missing.png (no such file)",
    ]


def test_every_internal_link_of_the_site_leads_somewhere(site):
    assert broken_links(site) == []


def section_text(page: Path, anchor: str) -> str:
    """The text of the section of a built page that starts at element ``anchor`` and ends
    at the next section of the same level."""
    html = page.read_text()
    start = html.index(f'id="{anchor}"')
    following = re.compile(r'<section id="command-campaign-[a-z-]+"')
    later = [m.start() for m in following.finditer(html, start + 1)]
    chunk = html[start : later[0]] if later else html[start:]
    return re.sub(r"<[^>]+>", "", chunk)


def test_every_command_and_option_is_in_the_reference(site):
    page = site / "reference" / "commands.html"
    options = reference_pages.option_strings()
    assert len(options) > 100
    for command, option in options:
        if command == "campaign":
            assert option in re.sub(r"<[^>]+>", "", page.read_text()), option
            continue
        anchor = reference_pages.anchor(command)
        assert option in section_text(page, anchor), f"{command} {option}"
    assert "(no help text)" not in page.read_text()  # every argument says what it is
    workloads = section_text(page, reference_pages.anchor("campaign workloads"))
    assert "usage: campaign workloads" in workloads  # a model's own command, its --help


def test_every_model_and_param_is_in_the_reference(site):
    from campaign.models import BUILTIN, load_model

    text = " ".join(parsed(site / "reference" / "models.html").text)
    for name in BUILTIN:
        model = load_model(name)
        assert f"model-{name}" in parsed(site / "reference" / "models.html").ids
        for param in model.params or []:
            assert param.name in text, f"{name}: {param.name}"
        for metric in model.metrics:
            assert metric in text, f"{name}: {metric}"


def test_the_results_reference_is_read_from_a_real_file(site):
    """Its tables name what a results file holds: the layout's variables, a sample's quantile
    dimension (in the group samples), a breakdown (a group of its own), the precision variables
    and the groups."""
    text = " ".join(parsed(site / "reference" / "results-file.html").text)
    for name in ("status", "seed", "replicate", "quantile", "mean_wait_ci_low",
                 "breakdowns/job_class", "mean_wait_by_job_class", "precision_state",
                 "failure_error", "peak_memory",
                 "spec_digest", "model_code_digest", "flag_meanings"):  # fmt: skip
        assert name in text, name


def section_html(page: Path, anchor: str) -> str:
    """A built page from element ``anchor`` to the next section."""
    html = page.read_text()
    start = html.index(f'id="{anchor}"')
    end = html.find("<section ", start + 1)
    return html[start : end if end > 0 else len(html)]


def section_of(page: Path, anchor: str) -> str:
    """The text of a built page from element ``anchor`` to the next section."""
    return re.sub(r"<[^>]+>", " ", section_html(page, anchor))


def test_every_spec_key_is_in_the_reference(site):
    """Each mapping of the spec's description has its section, with a row per key that
    names its type and default (the parser checks keys against the same description)."""
    from campaign.spec.placeholders import TASK_PLACEHOLDERS
    from campaign.spec.schema import PROCEDURES, SECTIONS
    from campaign.spec.schema_program import KINDS

    page = site / "reference" / "spec.html"
    for section in SECTIONS:
        html = section_html(page, reference_pages.spec_anchor(section))
        text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
        table = html[: html.index("</table>")]  # its keys' table (the header row first)
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.DOTALL)[1:]
        assert len(rows) == len(section.keys), f"{section.where}: a row per key"
        for key in section.keys:
            row = f"{key.name} (required)" if key.required else key.name
            assert f" {row} " in text, f"{section.where}: {key.name}"
            assert key.words().split(",")[0].split(" ")[0] in text, f"{section.where}: {key.name}"
    whole = " ".join(parsed(page).text)
    for name in [*PROCEDURES, *KINDS, *(f"{{{p}}}" for p in TASK_PLACEHOLDERS)]:
        assert name in whole, name


def test_the_site_carries_the_spec_schema(site):
    from campaign.spec.json_schema import json_schema

    assert json.loads((site / "_static" / "campaign-spec.schema.json").read_text()) == json_schema()
    assert (
        "../_static/campaign-spec.schema.json" in parsed(site / "reference" / "spec.html").targets
    )


def documented_objects(html: Path) -> dict[str, str]:
    """'module.name' -> the text of its entry, for every object autodoc documented on the
    site's pages."""
    found = {}
    signature = re.compile(
        r'<dt class="sig[^"]*"[^>]*>.*?<span class="sig-prename descclassname"><span class="pre">'
        r'([^<]*)</span></span><span class="sig-name descname"><span class="pre">([^<]*)</span>'
        r"(.*?)</dd>",
        re.DOTALL,
    )
    for page in html.rglob("*.html"):
        for prefix, name, rest in signature.findall(page.read_text()):
            found.setdefault(prefix + name, re.sub(r"<[^>]+>", " ", rest))
    return found


def test_every_public_function_is_in_the_reference(site):
    """Every name of `campaign.__all__` (the Python API) has an entry on the site with a
    description, wherever the package defines it."""
    import campaign

    documented = documented_objects(site)
    public = [name for name in campaign.__all__ if not name.startswith("__")]
    assert len(public) > 15
    for name in public:
        entries = [text for full, text in documented.items() if full == f"campaign.{name}"]
        entries += [
            text
            for full, text in documented.items()
            if full.startswith("campaign.") and full.rsplit(".", 1)[-1] == name
        ]
        assert entries, f"campaign.{name} is not in the reference"
        assert any(len(text.split()) >= 5 for text in entries), f"campaign.{name}: no description"


def chromium() -> str:
    path = shutil.which("chromium")
    assert path, "Debian's chromium is needed for this test: apt-get install chromium"
    return path


def rendered(page: str, tmp_path: Path) -> str:
    """The DOM of a page of the site after chromium ran its scripts."""
    done = subprocess.run(
        [chromium(), *BROWSER_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
         page],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    return done.stdout


def test_the_browser_shows_the_navigation(site, tmp_path):
    dom = rendered((site / "index.html").as_uri(), tmp_path)
    navigation = dom[dom.index('class="sidebar-tree"') :]
    for part in PARTS:
        assert f">{part}</a>" in navigation, part
    assert 'href="tutorials/first-campaign.html"' in navigation


def test_the_browser_shows_search_results(site, tmp_path):
    """Search runs in the browser, from the site's own index: no server, no network."""
    dom = rendered((site / "search.html").as_uri() + "?q=ledger", tmp_path)
    results = dom[dom.index('id="search-results"') :]
    found = re.findall(r'<li class="kind-text"><a href="([^"]+)"', results)
    assert "explanation/crash-safety.html" in found
    assert found[0] == "explanation/crash-safety.html"  # the page about it ranks first
