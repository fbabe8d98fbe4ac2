"""The certificate ``smj serve --tls`` serves with: a phone's browser opens its camera only on a secure page
(https, or this machine's own address), so a phone at the table reaches the live mode over https.

The certificate is self-signed, made once with ``cryptography`` (an ECDSA P-256 key) and kept in the user's
data folder (``tls/``; the key readable by this user alone). It names ``localhost``, this machine's name and
its addresses; it is made again when it has expired, can't be read, or no longer names an address this
machine has (a laptop on another network). A phone asks once whether to trust it: its SHA-256 fingerprint,
printed when the server starts, is what to compare.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

VALID_DAYS = 397  # what browsers accept of a server certificate's lifetime
RENEW_DAYS = 7  # made again this close to its end


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path
    fingerprint: str  # SHA-256 of the certificate, as browsers show it (AB:CD:...)
    names: tuple[str, ...]  # the names and addresses it is valid for
    ends: datetime.datetime  # when it stops being valid (UTC)


def local_names() -> tuple[str, ...]:
    """``localhost``, this machine's name, 127.0.0.1 and the addresses it reaches its networks by."""
    names = {"localhost", "127.0.0.1", socket.gethostname()}
    with contextlib.suppress(OSError):
        names.update(
            str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
        )
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:  # the address of the route out: a UDP socket's connect sends nothing
            probe.connect(("10.255.255.255", 1))
            names.add(probe.getsockname()[0])
        except OSError:
            pass
    return tuple(sorted(names))


def certificate(folder: Path, names: tuple[str, ...] | None = None) -> Certificate:
    """The certificate in ``folder`` (``cert.pem``, ``key.pem``), made when missing, unreadable, ending
    within ``RENEW_DAYS``, or not naming all of ``names`` (default: ``local_names()``)."""
    wanted = tuple(sorted(set(names if names is not None else local_names())))
    cert, key = folder / "cert.pem", folder / "key.pem"
    existing = _read(cert, key)
    now = datetime.datetime.now(datetime.UTC)
    if (
        existing is not None
        and set(wanted) <= set(existing.names)
        and existing.ends - now >= datetime.timedelta(days=RENEW_DAYS)
    ):
        return existing
    _make(cert, key, wanted)
    made = _read(cert, key)
    assert made is not None
    return made


def _read(cert: Path, key: Path) -> Certificate | None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization

    try:
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
        serialization.load_pem_private_key(key.read_bytes(), password=None)
    except (OSError, ValueError):
        return None
    try:
        alternative = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None
    names = [*alternative.get_values_for_type(x509.DNSName)]
    names += [str(address) for address in alternative.get_values_for_type(x509.IPAddress)]
    digest = loaded.fingerprint(hashes.SHA256()).hex().upper()
    fingerprint = ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))
    return Certificate(cert, key, fingerprint, tuple(sorted(names)), loaded.not_valid_after_utc)


def _make(cert: Path, key: Path, names: tuple[str, ...]) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    private = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "smj serve (self-signed)")])
    entries: list[x509.GeneralName] = []
    for name in names:
        try:
            entries.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            entries.append(x509.DNSName(name))
    now = datetime.datetime.now(datetime.UTC)
    built = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(entries), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(private, hashes.SHA256())
    )
    cert.parent.mkdir(parents=True, exist_ok=True)
    key_bytes = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    descriptor = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(key_bytes)
    os.chmod(key, 0o600)
    cert.write_bytes(built.public_bytes(serialization.Encoding.PEM))
