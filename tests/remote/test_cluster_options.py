"""A bad choice of cluster stops `campaign run` with one line before any work (no output
folder, no cluster started): an empty or unknown scheduler address, an empty cluster file
name, TLS files no cluster could use. The cluster/ scripts refuse bad addresses likewise."""

from __future__ import annotations

import subprocess

import pytest

from campaign.cli.main import main
from tests.conftest import MM1_TWO_LOADS as SPEC

ALLOWED = "allowed: tcp://HOST:PORT, or tls://HOST:PORT with --security"


def refused(spec, capsys, *options: str) -> list[str]:
    """The error lines of `campaign run SPEC --new OPTIONS`, which must exit 2 having made
    nothing."""
    assert main(["run", str(spec), "--new", *options]) == 2
    assert not (spec.parent / "out").exists()
    return capsys.readouterr().err.splitlines()


@pytest.mark.parametrize(
    "options, message",
    [
        (["--scheduler", "foo://x:1"], f"--scheduler foo://x:1: unknown scheme 'foo'; {ALLOWED}"),
        (["--scheduler", "ucx://x:1"], f"--scheduler ucx://x:1: unknown scheme 'ucx'; {ALLOWED}"),
        (["--scheduler", "tcp://"], f"--scheduler tcp://: no host; {ALLOWED}"),
        (["--scheduler", "tcp://:8786"], f"--scheduler tcp://:8786: no host; {ALLOWED}"),
        (["--scheduler", "tcp://10.0.0.1"], f"--scheduler tcp://10.0.0.1: no port; {ALLOWED}"),
        (["--scheduler", "10.0.0.1"], f"--scheduler 10.0.0.1: no port; {ALLOWED}"),
        (["--scheduler", "tcp://[::1]"], f"--scheduler tcp://[::1]: no port; {ALLOWED}"),
        (
            ["--scheduler", "tcp://h:port"],
            f"--scheduler tcp://h:port: port 'port' is not a number from 1 to 65535; {ALLOWED}",
        ),
        (
            ["--scheduler", "tcp://h:65536"],
            f"--scheduler tcp://h:65536: port '65536' is not a number from 1 to 65535; {ALLOWED}",
        ),
        (
            ["--scheduler", "tcp://::1:8786"],
            "--scheduler tcp://::1:8786: write an IPv6 address in brackets, [ADDRESS]:PORT; "
            f"{ALLOWED}",
        ),
        (
            ["--scheduler", ""],
            "--scheduler is empty: give tcp://HOST:PORT (or tls://HOST:PORT with --security), "
            "or leave it out to use the embedded cluster",
        ),
        (
            ["--cluster", " "],
            "--cluster is empty: give a cluster file, or leave it out to use the embedded cluster",
        ),
    ],
)
def test_bad_cluster_choice_is_one_line_before_any_work(write_spec, capsys, options, message):
    spec = write_spec(SPEC)
    assert refused(spec, capsys, *options) == [f"campaign: error: {message}"]


def test_unusable_tls_files_are_one_line_before_the_embedded_cluster_starts(
    write_spec, remote, tmp_path, capsys
):
    certs = remote.make_certs(tmp_path / "certs")
    other = remote.make_certs(tmp_path / "other")  # another authority's certificate and key
    (tmp_path / "garbage-key.pem").write_text("not a key\n")
    rsa = tmp_path / "rsa-key.pem"  # the certificates' keys are EC: a key of another type
    subprocess.run(["openssl", "genrsa", "-out", str(rsa), "2048"], check=True, capture_output=True)
    spec = write_spec(SPEC)
    ca, cert, key = certs / "ca.pem", certs / "cluster.pem", certs / "cluster-key.pem"
    cases = [
        (
            f"ca: {ca}\ncert: {cert}\nkey: {tmp_path / 'garbage-key.pem'}\n",
            f"key file {tmp_path / 'garbage-key.pem'} is not an unencrypted PEM private key (",
        ),
        (
            f"ca: {ca}\ncert: {cert}\nkey: {other / 'cluster-key.pem'}\n",
            f"key file {other / 'cluster-key.pem'} is not the private key of {cert}",
        ),
        (
            f"ca: {ca}\ncert: {cert}\nkey: {rsa}\n",
            f"key file {rsa} is not the private key of {cert}",
        ),
        (
            f"ca: {ca}\ncert: {other / 'cluster.pem'}\nkey: {other / 'cluster-key.pem'}\n",
            f"TLS with cert {other / 'cluster.pem'} and ca {ca} fails (is the cert signed by "
            "that ca?): [SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed",
        ),
        (
            f"ca: {key}\ncert: {cert}\nkey: {key}\n",
            f"ca file {key} holds no PEM certificate (",
        ),
        (
            f"ca: {ca}\ncert: {key}\nkey: {key}\n",
            f"cert file {key} holds no PEM certificate (",
        ),
    ]
    for text, message in cases:
        settings = tmp_path / "security.yaml"
        settings.write_text(text)
        lines = refused(spec, capsys, "--security", str(settings))
        assert len(lines) == 1, lines
        assert lines[0].startswith(f"campaign: error: security file {settings}: {message}")


def test_scripts_refuse_a_bad_address_in_one_line(remote):
    script = remote.repo / "cluster" / "start-workers.sh"
    env = {**remote.env, "CERTS": ""}
    cases = [
        (["foo://x:1"], "ADDRESS must be tcp://HOST:PORT or tls://HOST:PORT, got 'foo://x:1'"),
        (["tls://x:1"], "a tls:// scheduler needs CERTS=DIR (see cluster/README.md)"),
        (
            ["tcp://nowhere.invalid:1"],
            "cannot tell which address of this machine reaches tcp://nowhere.invalid:1 (",
        ),
    ]
    for args, message in cases:
        done = subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True)
        assert done.returncode == 2
        assert done.stderr.startswith(f"start-workers.sh: {message}")
        assert len(done.stderr.splitlines()) == 1
    done = subprocess.run(
        ["bash", str(remote.repo / "cluster" / "start-scheduler.sh"), "::1"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (
        2,
        "start-scheduler.sh: HOST must be an IPv4 address or a host name, got '::1'\n",
    )
