"""Spec loading: valid specs parse; each kind of mistake gets one line naming key and allowed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from campaign.cli.main import main
from campaign.errors import CampaignError
from campaign.plan.plan import check_model
from campaign.spec.load import load_spec

VALID = """
name: demo
model: mm1
params:
  service_rate: 1.0
  customers: 100
factors:
  arrival_rate: [0.5, 0.8]
  label: {low: 1, high: 2}
paired: [label]
replicates: 3
seed: 7
metrics: [mean_wait]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def test_valid_spec_parses_every_key(tmp_path):
    # 'label' is not an mm1 parameter: loading a spec never asks the model (the plan does)
    spec = load_spec(write(tmp_path, VALID))
    assert spec.name == "demo" and spec.model == "mm1"
    assert spec.params == {"service_rate": 1.0, "customers": 100}
    assert [f.name for f in spec.factors] == ["arrival_rate", "label"]
    assert spec.factor("arrival_rate").values == (0.5, 0.8)
    assert spec.factor("label").labels == ("low", "high")
    assert spec.factor("label").values == (1, 2)
    assert spec.paired == ("label",)
    assert (spec.replicates, spec.seed, spec.metrics) == (3, 7, ("mean_wait",))
    assert spec.cells == 4 and spec.tasks == 12
    assert spec.output == Path.cwd() / "outputs" / "demo"
    assert spec.text == textwrap.dedent(VALID)


def test_explicit_output_is_relative_to_the_spec_file(tmp_path):
    spec = load_spec(write(tmp_path, VALID + "output: results/here\n"))
    assert spec.output == tmp_path / "results" / "here"


ASKS_THE_MODEL = {
    "model: 'nosuchpackage.mod:run'",
    "metrics: [mean_wiat]",
    "factors: {utilization: [1, 2]}",
    "factors: {mean_wait_n: [1, 2]}",
}


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ("colour: red", "unknown key 'colour'; allowed keys: name, description, model"),
        ("factors: {arrival_rate: []}", "factors.arrival_rate: the level list is empty"),
        ("factors: {arrival_rate: [0.5, fast]}", "level 'fast' is a string but earlier levels"),
        ("factors: {arrival_rate: [[1, 2]]}", "level [1, 2] is not allowed; levels are numbers"),
        ("model: nosuchmodel", "model: unknown model 'nosuchmodel'; registered models:"),
        ("model: 'nosuchpackage.mod:run'", "cannot import module 'nosuchpackage.mod'"),
        ("replicates: 0", "replicates: 0 is not allowed; use an integer >= 1"),
        ("replicates: ten", "replicates: 'ten' is not allowed; use an integer >= 1"),
        ("paired: [speed]", "paired: 'speed' is not a factor; factors: arrival_rate"),
        ("seed: -1", "seed: -1 is not allowed; use an integer >= 0"),
        ("factors: {replicate: [1]}", "factors: 'replicate' is reserved"),
        ("factors: {customers: [1, 2]}", "'customers' is also a fixed parameter"),
        ("factors: {arrival_rate: [0.5, 0.5]}", "factors.arrival_rate: levels repeat"),
        (
            "factors: {arrival_rate: {low: 0.5, high: 0.8, also_low: 0.5}}",
            "factors.arrival_rate: labels 'low' and 'also_low' give the same value 0.5; a "
            "design runs each level once (one label, or more replicates)",
        ),
        ("factors: {failure: [1, 2]}", "factors: 'failure' is reserved"),
        ("factors: {seed: [1, 2]}", "factors: 'seed' is reserved"),
        (
            "factors: {arrival_rate: [18446744073709551616]}",
            "level 18446744073709551616 does not fit a 64-bit integer, so results cannot store",
        ),
        (
            "factors: {arrival_rate: [0.5, 9007199254740993]}",
            "level 9007199254740993 is not exactly representable as a float",
        ),
        ('factors: {arrival_rate: {"a\\0b": 0.5}}', "level label 'a\\x00b' contains a NUL"),
        ("metrics: [mean_wiat]", "metrics: 'mean_wiat' is not a metric of model mm1; its metrics:"),
        ("metrics: ['a/b']", "metrics: metric name 'a/b' is not allowed; use letters, digits"),
        ("metrics: [status]", "metric name 'status' is reserved by the results layout"),
        ("metrics: [replicate]", "metric name 'replicate' is reserved by the results layout"),
        (
            "metrics: [mean_wait, mean_wait_mean]",
            "metric 'mean_wait_mean' has the name of a summary variable of metric 'mean_wait'",
        ),
        ("metrics: [arrival_rate]", "metric 'arrival_rate' has the name of factor 'arrival_rate'"),
        (
            "factors: {utilization: [1, 2]}",
            "metric 'utilization' has the name of factor 'utilization' (model mm1); a results "
            "file cannot hold both: list the metrics to keep in 'metrics:', without it",
        ),
        (
            "factors: {mean_wait_n: [1, 2]}",
            "factor 'mean_wait_n' has the name of a summary variable of metric 'mean_wait'",
        ),
        (
            "replicates: 100000000",
            "the design has 2 cells x 100,000,000 replicates (replicates) = 200,000,000 tasks; "
            "at most 10,000,000 tasks are allowed",
        ),
    ],
)
def test_invalid_spec_names_key_value_and_allowed(tmp_path, edit, expected):
    base = {
        "name": "name: demo",
        "model": "model: mm1",
        "params": "params: {service_rate: 1.0, customers: 100}",
        "factors": "factors: {arrival_rate: [0.5, 0.8]}",
        "replicates": "replicates: 2",
        "seed": "seed: 1",
    }
    key = edit.split(":")[0]
    base[key] = edit
    path = write(tmp_path, "\n".join(base.values()) + "\n")
    if edit in ASKS_THE_MODEL:
        spec = load_spec(path)  # well formed: the model refuses it when the plan is made
        with pytest.raises(CampaignError) as info:
            check_model(spec)
    else:
        with pytest.raises(CampaignError) as info:
            load_spec(path)
    message = str(info.value)
    assert expected in message
    assert "\n" not in message
    assert str(path) in message


def test_missing_required_key(tmp_path):
    path = write(tmp_path, "name: x\nmodel: mm1\nreplicates: 1\n")
    with pytest.raises(
        CampaignError, match=r"missing key 'seed' \(the base seed: .*; integer >= 0\)"
    ):
        load_spec(path)


def test_model_refuses_bad_params_naming_the_cell(tmp_path, capsys):
    path = write(
        tmp_path,
        """
        name: demo
        model: mm1
        params: {service_rate: 1.0}
        factors: {arrival_rate: [0.5, 1.5]}
        replicates: 1
        seed: 1
        """,
    )
    spec = load_spec(path)  # the spec itself is well formed
    with pytest.raises(CampaignError) as info:
        check_model(spec)
    message = str(info.value)
    assert message.startswith(f"{path}: params (cell arrival_rate=1.5): ")
    assert "0 < arrival_rate < service_rate" in message and "\n" not in message
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == f"campaign: error: {message}\n"


def test_model_refuses_unknown_param(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default output folder, outputs/d, is made nowhere
    path = write(
        tmp_path, "name: d\nmodel: mm1\nparams: {arival_rate: 0.5}\nreplicates: 1\nseed: 1\n"
    )
    with pytest.raises(CampaignError, match="unknown parameter 'arival_rate' for model mm1"):
        check_model(load_spec(path))
    for command in ("validate", "plan", "status", "run"):
        assert main([command, str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"campaign: error: {path}: params: unknown parameter 'arival_rate'")
    assert not (tmp_path / "outputs").exists()


def test_yaml_syntax_error_gives_the_line(tmp_path):
    path = write(tmp_path, "name: d\nfactors: [a\nseed: 1\n")
    with pytest.raises(CampaignError, match="is not valid YAML"):
        load_spec(path)


def test_duplicate_keys_are_refused_naming_the_key_and_both_lines(tmp_path):
    text = VALID.replace("  customers: 100\n", "  customers: 100\n  customers: 200\n")
    path = write(tmp_path, text)
    with pytest.raises(CampaignError) as info:
        load_spec(path)
    assert str(info.value) == (
        f"{path}: line 7: key 'customers' appears twice in one mapping (first on line 6); keep one"
    )
    top = write(tmp_path, VALID + "seed: 8\n")
    with pytest.raises(CampaignError, match="line 14: key 'seed' appears twice .* line 12"):
        load_spec(top)


def test_yaml_merge_keys_are_not_duplicates(tmp_path):
    text = VALID.replace(
        "params:\n  service_rate: 1.0\n  customers: 100\n",
        "params:\n  <<: {service_rate: 1.0, customers: 100}\n  customers: 200\n",
    )
    spec = load_spec(write(tmp_path, text))
    assert spec.params == {"service_rate": 1.0, "customers": 200}


def alias_bomb(levels: int) -> str:
    lines = ["name: bomb", "model: 'tests.nowhere:run'", "replicates: 1", "seed: 1", "params:"]
    lines.append("  a0: &a0 [x, x, x, x, x, x, x, x, x, x]")
    for i in range(1, levels):
        lines.append(f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_is_refused_before_any_value_is_built(tmp_path):
    # Nine levels of ten aliases would expand to 10**9 values.
    path = write(tmp_path, alias_bomb(9))
    with pytest.raises(CampaignError) as info:
        load_spec(path)
    message = str(info.value)
    assert message.startswith(f"{path}: line ")
    assert message.endswith(
        "the spec expands to more than 100,000 values (YAML aliases repeat their value wherever "
        "they are used); write a smaller spec"
    )
    # Aliases within the limit still work and expand to their values.
    spec = load_spec(write(tmp_path, alias_bomb(3)))
    assert spec.params["a2"] == [[["x"] * 10] * 10] * 10


def test_recursive_aliases_and_deep_nesting_are_refused(tmp_path):
    path = write(tmp_path, VALID + "description: &d [1, *d]\n")
    with pytest.raises(CampaignError, match="line 14: a YAML alias is used inside its own"):
        load_spec(path)
    path = write(tmp_path, VALID + "description: " + "[" * 60 + "]" * 60 + "\n")
    with pytest.raises(CampaignError, match="values are nested more than 50 levels deep"):
        load_spec(path)


def test_a_spec_that_is_not_utf8_or_too_big_gets_one_line(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(VALID.encode() + "description: café\n".encode("latin-1"))
    with pytest.raises(CampaignError) as info:
        load_spec(path)
    assert str(info.value) == (
        f"{path}: line 14: byte 0xe9 is not UTF-8 text; save the spec as UTF-8"
    )
    big = write(tmp_path, VALID + "description: " + "x" * (1 << 20) + "\n")
    with pytest.raises(CampaignError, match=r"may have at most 1,048,576 bytes"):
        load_spec(big)


def test_output_expands_home_and_every_output_folder_is_absolute(tmp_path, monkeypatch):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(elsewhere)
    spec = load_spec(write(tmp_path, VALID + "output: ~/results/x\n"))
    assert spec.output == home / "results" / "x"
    # The default folder is outputs/<name> in the current folder, made absolute.
    spec = load_spec(write(tmp_path, VALID))
    assert spec.output == elsewhere / "outputs" / "demo"
    # A relative output is relative to the spec file, wherever the command runs.
    spec = load_spec(Path("..") / "spec.yaml")
    assert spec.output == elsewhere / "outputs" / "demo"
    relative = write(tmp_path, VALID + "output: ../up/here\n")
    spec = load_spec(Path("..") / relative.name)
    assert spec.output == tmp_path.parent / "up" / "here"


THOUSAND = "[" + ", ".join(str(i) for i in range(1000)) + "]"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            f"factors: {{arrival_rate: {THOUSAND}, a: {THOUSAND}, b: {THOUSAND}}}\nreplicates: 1",
            "the design has 1,000,000,000 cells x 1 replicates (replicates) = 1,000,000,000 "
            "tasks; at most 10,000,000 tasks are allowed: use fewer levels or replicates, or "
            "split the campaign",
        ),
        (
            "precision: {metrics: [mean_wait], half_width: 0.1, max_replicates: 1e9}",
            "precision.max_replicates: 1000000000.0 is not allowed; use an integer >= "
            "min_replicates (5)",
        ),
        (
            "precision: {metrics: [mean_wait], half_width: 0.1, max_replicates: 1.0e+9}",
            "precision.max_replicates: 1000000000.0 is not allowed; use an integer >= "
            "min_replicates (5)",
        ),
    ],
)
def test_a_design_of_a_billion_tasks_is_refused_before_any_task_exists(tmp_path, edit, expected):
    """Refused from the level counts alone: nothing of the size of the design is built."""
    text = "name: big\nmodel: mm1\nparams: {service_rate: 1.0, customers: 10}\nseed: 1\n"
    if not edit.startswith("factors"):
        text += "factors: {arrival_rate: [0.5, 0.8]}\n"
    path = write(tmp_path, text + edit + "\n")
    with pytest.raises(CampaignError) as info:
        load_spec(path)
    assert str(info.value) == f"{path}: {expected}"


def test_a_precision_target_with_too_many_replicates_is_refused_before_expansion(tmp_path):
    text = VALID.replace(
        "replicates: 3\n",
        "precision: {metrics: [mean_wait], half_width: 0.1, max_replicates: 1000000000}\n",
    )
    with pytest.raises(CampaignError) as info:
        load_spec(write(tmp_path, text))
    assert "the design has 4 cells x 1,000,000,000 replicates (precision.max_replicates)" in str(
        info.value
    )


NUMBERS = """
name: numbers
model: mm1
params: {customers: 200, fail_above: 1e3}
factors:
  arrival_rate: [2.5E-1, 5e-1]
  service_rate: {slow: 1e0, fast: 2.0e0}
paired: [service_rate]
replicates: 2
seed: 5
output: out
"""


def test_exponent_numbers_are_read_as_yaml_1_2_reads_them(tmp_path, capsys):
    path = write(tmp_path, NUMBERS)
    spec = load_spec(path)
    assert spec.params == {"customers": 200, "fail_above": 1000.0}
    assert spec.factor("arrival_rate").values == (0.25, 0.5)
    assert spec.factor("service_rate").values == (1.0, 2.0)
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  factor arrival_rate: 2 levels (numbers): 0.25, 0.5\n" in out
    levels = "slow = 1.0 (number), fast = 2.0 (number)"
    assert f"  factor service_rate (paired): 2 levels: {levels}\n" in out
    quoted = write(tmp_path, NUMBERS.replace("[2.5E-1, 5e-1]", '["2.5E-1", "5e-1"]'))
    assert load_spec(quoted).factor("arrival_rate").values == ("2.5E-1", "5e-1")
    assert main(["validate", str(quoted)]) == 2  # quoted, a string: the model refuses it
    assert "parameter 'arrival_rate' must be a number > 0 (1/s), got '2.5E-1'" in (
        capsys.readouterr().err
    )


def test_numbers_yaml_1_1_and_1_2_read_otherwise_are_refused_in_one_line(tmp_path):
    """PyYAML reads 010 as the octal 8 and 12:30 as 750: the model would get 8 where 10 was
    written. Such a number is refused, saying both readings; 00, 1_000 and 0x10 mean one
    number in either and are read as before."""
    for written, message in (
        ("[010, 020]", "010 is the octal number 8 in YAML 1.1 and 10 in YAML 1.2; write 8 or "
         "10 as meant, or '010' in quotes for text"),
        ("[12:30, 1]", "12:30 is the number 750 in YAML 1.1 and text in YAML 1.2; write 750 "
         "if that is meant, or '12:30' in quotes for text"),
        ("[0b11, 1]", "0b11 is the number 3 in YAML 1.1 and text in YAML 1.2"),
    ):  # fmt: skip
        path = write(tmp_path, NUMBERS.replace("[2.5E-1, 5e-1]", written))
        with pytest.raises(CampaignError) as error:
            load_spec(path)
        assert str(error.value).startswith(f"{path}: line 6: {message}")
    path = write(tmp_path, NUMBERS.replace("[2.5E-1, 5e-1]", "[00, 1_000, 0x10]"))
    assert load_spec(path).factor("arrival_rate").values == (0, 1000, 16)
    quoted = write(tmp_path, NUMBERS.replace("[2.5E-1, 5e-1]", "['010', '020']"))
    assert load_spec(quoted).factor("arrival_rate").values == ("010", "020")


def test_a_results_file_gives_back_the_numbers_its_spec_file_gave(tmp_path, scheduler_address):
    import campaign
    from campaign.pipelines.verify import verify

    path = write(tmp_path, NUMBERS)
    data = campaign.run(path, scheduler=scheduler_address, progress=False)
    assert data.arrival_rate.values.tolist() == [0.25, 0.5]
    verdict = verify(tmp_path / "out", count=3, scheduler=scheduler_address)
    assert (verdict.sampled, verdict.reproduced) == (3, 3)


@pytest.mark.parametrize("half_width", [1, 5])
def test_a_relative_precision_target_of_one_or_more_is_refused(tmp_path, half_width):
    """``half_width: 5`` with ``relative: true`` (the default) was a target of 500% of the
    mean, met at once: almost surely a percentage written for a fraction."""
    target = f"precision: {{metrics: [mean_wait], half_width: {half_width}, max_replicates: 9}}\n"
    path = write(tmp_path, VALID.replace("replicates: 3\n", target))
    with pytest.raises(CampaignError) as info:
        load_spec(path)
    assert str(info.value) == (
        f"{path}: precision.half_width: {half_width} is a share of |mean| (relative: true), "
        f"{100 * half_width}% of it; use a number below 1 (0.05 for 5%), or relative: false "
        "for a target in the metric's units"
    )
    absolute = target.replace("max_replicates", "relative: false, max_replicates")
    assert load_spec(write(tmp_path, VALID.replace("replicates: 3\n", absolute))).precision


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("metrics: [mean_wait, mean_wait]", "metrics: names repeat: ['mean_wait', 'mean_wait']"),
        ("paired: [label, label]", "paired: names repeat: ['label', 'label']"),
    ],
)
def test_a_metric_or_paired_factor_named_twice_is_refused(tmp_path, key, message):
    """Both were accepted: the results kept the repeated list in their spec and attributes."""
    first = key.split(":")[0]
    text = "\n".join(line for line in VALID.splitlines() if not line.startswith(first + ":"))
    path = write(tmp_path, text + "\n" + key + "\n")
    with pytest.raises(CampaignError) as info:
        load_spec(path)
    assert str(info.value) == f"{path}: {message}; give each name once"
