"""The TLS settings file (``--security``), read so that its errors name the file::

    ca: certs/ca.pem          # the certificate authority both ends must be signed by
    cert: certs/cluster.pem   # this side's certificate
    key: certs/cluster-key.pem

Paths are relative to the file. Dask's TLS is mutual: the scheduler and the workers accept
only peers that show a certificate signed by ``ca``, so only holders of such a certificate
can talk to them.
"""

from __future__ import annotations

import os
import re
import ssl
from pathlib import Path
from typing import Any

import yaml

from campaign.errors import CampaignError

SECURITY_FIELDS = ("ca", "cert", "key")


def read_mapping(path: Path, what: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    """The settings of a small YAML file (``what`` names it in errors): one mapping, of
    ``allowed`` settings only."""
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise CampaignError(f"{what} file {path} does not exist") from None
    except (OSError, yaml.YAMLError) as error:
        problem = str(error).replace("\n", " ")
        raise CampaignError(f"{what} file {path} cannot be read: {problem}") from None
    if not isinstance(data, dict):
        raise CampaignError(f"{what} file {path} must be a mapping of settings")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise CampaignError(
            f"{what} file {path}: unknown setting {unknown[0]!r}; allowed: {', '.join(allowed)}"
        )
    return data


def load_security(path: str | Path) -> Any:
    """A `distributed.Security` from a TLS settings file, requiring encryption.

    The one certificate serves every role (client, scheduler, worker), so the same file also
    secures an embedded or batch-system cluster that this process starts.
    """
    from distributed import Security

    path = Path(path)
    data = read_mapping(path, "security", SECURITY_FIELDS)
    files: dict[str, str] = {}
    for name in SECURITY_FIELDS:
        value = data.get(name)
        if value is None:
            if name == "key":  # the key may be appended to the certificate file
                continue
            raise CampaignError(f"security file {path}: {name!r} (a PEM file path) is required")
        if not isinstance(value, str):
            raise CampaignError(f"security file {path}: {name!r} must be a file path")
        file = (path.parent / os.path.expanduser(value)).resolve()
        if not file.is_file():
            raise CampaignError(f"security file {path}: {name} file {file} does not exist")
        files[name] = str(file)
    cert, key = files["cert"], files.get("key")
    check_tls_files(path, files["ca"], cert, key)
    return Security(
        require_encryption=True,
        tls_ca_file=files["ca"],
        tls_client_cert=cert,
        tls_client_key=key,
        tls_scheduler_cert=cert,
        tls_scheduler_key=key,
        tls_worker_cert=cert,
        tls_worker_key=key,
    )


def _ssl_reason(error: Exception) -> str:
    """OpenSSL's message without the C source location it appends."""
    return re.sub(r"\s*\(_ssl\.c:\d+\)$", "", str(error.args[-1] if error.args else error))


def check_tls_files(path: Path, ca: str, cert: str, key: str | None) -> None:
    """Refuse TLS files Dask could not use, in one line naming the file, before anything starts:
    each must parse, the key must be the certificate's, and two holders of the certificate
    must accept each other (a handshake in memory, both sides showing it, as Dask's do)."""
    try:
        ssl.create_default_context(cafile=ca)
    except ssl.SSLError as error:
        raise CampaignError(
            f"security file {path}: ca file {ca} holds no PEM certificate ({_ssl_reason(error)})"
        ) from None
    try:
        ssl.create_default_context(cafile=cert)
    except ssl.SSLError as error:
        raise CampaignError(
            f"security file {path}: cert file {cert} holds no PEM certificate "
            f"({_ssl_reason(error)})"
        ) from None
    contexts = []
    for purpose in (ssl.Purpose.SERVER_AUTH, ssl.Purpose.CLIENT_AUTH):
        context = ssl.create_default_context(purpose, cafile=ca)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_REQUIRED
        try:
            context.load_cert_chain(cert, key, password=lambda: b"")
        except ssl.SSLError as error:
            # a key of another type than the certificate's (RSA beside EC) makes OpenSSL drop
            # the certificate: NO_CERTIFICATE_ASSIGNED, a mismatch all the same
            mismatch = ("KEY_VALUES_MISMATCH", "NO_CERTIFICATE_ASSIGNED")
            problem = (
                f"is not the private key of {cert}"
                if any(reason in str(error) for reason in mismatch)
                else f"is not an unencrypted PEM private key ({_ssl_reason(error)})"
            )
            raise CampaignError(f"security file {path}: key file {key or cert} {problem}") from None
        contexts.append(context)
    try:
        _handshake(*contexts)
    except ssl.SSLError as error:
        raise CampaignError(
            f"security file {path}: TLS with cert {cert} and ca {ca} fails (is the cert signed "
            f"by that ca?): {_ssl_reason(error)}"
        ) from None


def _handshake(client_context: ssl.SSLContext, server_context: ssl.SSLContext) -> None:
    """A TLS handshake between the two contexts through memory buffers; raises SSLError."""
    to_server, to_client = ssl.MemoryBIO(), ssl.MemoryBIO()
    client = client_context.wrap_bio(to_client, to_server, server_side=False)
    server = server_context.wrap_bio(to_server, to_client, server_side=True)
    finished = [False, False]
    for _ in range(8):
        for index, side in enumerate((client, server)):
            if not finished[index]:
                try:
                    side.do_handshake()
                    finished[index] = True
                except ssl.SSLWantReadError:
                    pass
        if all(finished):
            return
    raise ssl.SSLError("the TLS handshake did not complete")
