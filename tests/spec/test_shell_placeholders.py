"""A placeholder in a shell line gives its value to /bin/sh as the user means it, whether it
stands alone, inside double or single quotes, inside a word, or in a command substitution:
the value is shell-quoted once, never its quotes passed through."""

from __future__ import annotations

import subprocess

import pytest

import campaign
from campaign.spec.placeholders import fill_shell_line

NASTY = "a b'c\"$HOME `d` \\e; echo injected"


def shell_words(line: str, values: dict[str, str]) -> list[str]:
    """The words /bin/sh passes to printf for the filled line (one per line of output)."""
    done = subprocess.run(
        ["/bin/sh", "-c", fill_shell_line(line, values)], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.split("\0")[:-1]


@pytest.mark.parametrize(
    "line, expected",
    [
        ("printf '%s\\0' {x}", [NASTY]),
        ('printf "%s\\0" "{x}"', [NASTY]),
        ("printf '%s\\0' '{x}'", [NASTY]),
        ('printf "%s\\0" "--name={x}.csv" {y}', [f"--name={NASTY}.csv", "2"]),
        ("printf '%s\\0' x{y}y", ["x2y"]),
        ('printf "%s\\0" "$(printf "%s" "{x}")"', [NASTY]),
        ("printf '%s\\0' \"`printf '%s' '{x}'`\"", [NASTY]),
        ('printf "%s\\0" "it\\"s {y}"', ['it"s 2']),
        ("printf '%s\\0' \"{{x}}\" '{{y}}'", ["{x}", "{y}"]),
    ],
)
def test_a_value_reaches_the_shell_as_written_wherever_the_placeholder_stands(line, expected):
    assert shell_words(line, {"x": NASTY, "y": "2"}) == expected


def test_a_quoted_placeholder_in_a_campaign_gives_the_level(write_spec, scheduler_address):
    spec = write_spec(
        """
        name: quoted
        model:
          command: |-
            echo "chars=$(printf %s "{lvl}" | wc -c)"; echo "single=$(printf %s '{lvl}' | wc -c)"
          shell: true
        factors:
          lvl: ["two words", "it's; echo chars=0"]
        replicates: 1
        seed: 1
        output: out
        """
    )
    data = campaign.run(spec, scheduler=scheduler_address, progress=False)
    assert data.chars.values.ravel().tolist() == [9, 18]
    assert data.single.values.ravel().tolist() == [9, 18]
