"""Library calls answer in Python words: a bad argument names the parameter, never an option
of the command line; the command line names its option for the same mistake."""

import numpy as np
import pytest
import xarray as xr

from campaign.analysis.comparison import compare
from campaign.analysis.query import summary_table
from campaign.cli.main import main
from campaign.errors import ParameterError
from campaign.render.comparison import render_comparison
from campaign.render.table import render


@pytest.fixture
def results(tmp_path):
    values = np.arange(12, dtype=float).reshape(2, 2, 3)
    data = {
        "v": (("load", "kind", "replicate"), values),
        "status": (("load", "kind", "replicate"), np.ones((2, 2, 3), dtype=np.int8)),
    }
    coords = {"load": [0.5, 1.0], "kind": ["a", "b"], "replicate": [0, 1, 2]}
    dataset = xr.Dataset(data, coords=coords, attrs={"paired": "kind"})
    path = tmp_path / "results.nc"
    dataset.to_netcdf(path)
    return dataset, path


def test_a_library_call_names_its_parameters(results):
    dataset, _ = results
    with pytest.raises(ParameterError) as where:
        summary_table(dataset, ["v"], where=["q=1"])
    assert str(where.value) == "where 'q=1': unknown factor 'q'; factors: load, kind"
    with pytest.raises(ParameterError) as by:
        compare(dataset, "kind", "a", "v", by=["speed"])
    assert str(by.value) == "by 'speed' is not a factor; factors: load, kind"
    result = compare(dataset, "kind", "a", "v")
    with pytest.raises(ParameterError) as fmt:
        render_comparison(result, "xml")
    assert str(fmt.value) == (
        "fmt must be one of text, csv, json, markdown, latex, html; got 'xml'"
    )


def test_the_command_line_names_its_options_for_the_same_mistakes(results, capsys):
    _, path = results
    assert main(["query", str(path), "--where", "q=1"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --where 'q=1': unknown factor 'q'; factors: load, kind\n"
    )
    argv = ["compare", str(path), "--factor", "kind", "--baseline", "a", "--metric", "v"]
    assert main([*argv, "--by", "speed"]) == 2
    assert capsys.readouterr().err == (
        "campaign: error: --by 'speed' is not a factor; factors: load, kind\n"
    )


def test_every_format_of_one_table_comes_from_one_renderer(results):
    dataset, _ = results
    result = compare(dataset, "kind", "a", "v", by=["load"])
    csv = render_comparison(result, "csv").splitlines()
    assert csv[0].startswith("load,kind,baseline_mean,mean,difference,")
    assert csv[1].split(",")[:5] == ["0.5", "b", "1.0", "4.0", "3.0"]
    markdown = render_comparison(result, "markdown").splitlines()
    assert markdown[0] == "| load | kind | n | a (baseline) | mean | difference | ratio |"
    # y = x + 3 per replicate: the difference exact; the ratio y/x = 4 varies (t 4.303):
    # for a paper, one notation (± the half-width, to 2 significant digits)
    assert markdown[2] == "| 0.5 | b | 3 | 1.000 | 4.000 | 3.000 ± 0 | 4.0 ± 7.5 |"
    text = render_comparison(result).splitlines()
    assert text[2:5] == [  # under the title and the method line
        "load  kind  n  a (baseline)  mean  difference  difference interval  ratio  ratio interval",
        "----  ----  -  ------------  ----  ----------  -------------------  -----  -------------"
        "--",
        "0.5   b     3             1     4       3 ± 0               [3, 3]      4  [-3.452, "
        "11.45]",
    ]
    assert render(result.to_dataframe().reset_index()[["load"]].head(1), "json") == (
        '[\n  {\n    "load": 0.5\n  }\n]\n'
    )
