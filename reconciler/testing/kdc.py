"""A real MIT Kerberos KDC for tests (Debian's krb5-kdc, krb5-admin-server's kadmin.local):
its own realm, database, krb5.conf and ports in a temporary directory, started as a child
process and stopped with the context.

    with TestKdc() as kdc:
        kdc.add_service("kafka/127.0.0.1")            # the brokers' principal, into kdc.service_keytab
        kdc.add_user("reconciler")                    # a client principal, into kdc.client_keytab
        kdc.env                                       # KRB5_CONFIG (and nothing else) for clients

`clock_offset` runs the KDC's clock that far ahead (libfaketime), for clock skew failures: with
MIT's default kdc_timesync the client follows the KDC's clock and the brokers refuse its tickets;
with kdc_timesync=False the KDC refuses the login itself.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

REALM = "TEST.RECONCILER"
_TOOLS = ("krb5kdc", "kdb5_util", "kadmin.local")
INSTALL = "apt-get install krb5-kdc krb5-admin-server krb5-user (and libkrb5-dev to build the gssapi package)"


def _sbin(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if found is None:
        raise RuntimeError(f"the test KDC needs {name}: {INSTALL}")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TestKdc:
    __test__ = False

    def __init__(self, realm: str = REALM, clock_offset: str | None = None, kdc_timesync: bool = True):
        self.realm = realm
        self._clock_offset = clock_offset
        self._timesync = kdc_timesync
        self._directory = tempfile.TemporaryDirectory(prefix="test-kdc-")
        self.path = Path(self._directory.name)
        self.port = _free_port()
        self.krb5_conf = self.path / "krb5.conf"
        self.service_keytab = self.path / "service.keytab"
        self.client_keytab = self.path / "client.keytab"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def env(self) -> dict[str, str]:
        """What a Kerberos client or acceptor of this realm needs in its environment."""
        return {"KRB5_CONFIG": str(self.krb5_conf)}

    def _server_env(self) -> dict[str, str]:
        return {**os.environ, "KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.path / "kdc.conf")}

    def __enter__(self) -> TestKdc:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        tools = {name: _sbin(name) for name in _TOOLS}
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f"  default_realm = {self.realm}\n"
            "  dns_lookup_kdc = false\n  dns_lookup_realm = false\n  rdns = false\n"
            "  dns_canonicalize_hostname = false\n  udp_preference_limit = 1\n  ignore_acceptor_hostname = false\n"
            f"  kdc_timesync = {int(self._timesync)}\n"
            f"[realms]\n  {self.realm} = {{\n    kdc = 127.0.0.1:{self.port}\n  }}\n"
        )
        (self.path / "kdc.conf").write_text(
            f"[kdcdefaults]\n  kdc_tcp_listen = 127.0.0.1:{self.port}\n  kdc_listen = 127.0.0.1:{self.port}\n"
            f"[realms]\n  {self.realm} = {{\n"
            f"    database_name = {self.path / 'principal'}\n"
            f"    key_stash_file = {self.path / 'stash'}\n"
            f"    acl_file = {self.path / 'kadm5.acl'}\n"
            "    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n"
            "  }\n"
        )
        (self.path / "kadm5.acl").write_text("")
        self._run(tools["kdb5_util"], "create", "-s", "-r", self.realm, "-P", "test-master-password")
        command = [tools["krb5kdc"], "-n", "-r", self.realm, "-P", str(self.path / "kdc.pid")]
        if self._clock_offset:
            command = [_sbin("faketime"), "-f", self._clock_offset, *command]
        log = open(self.path / "kdc.log", "wb")  # noqa: SIM115 - the child keeps it
        self._process = subprocess.Popen(command, env=self._server_env(), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"the test KDC exited: {(self.path / 'kdc.log').read_text(errors='replace')[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the test KDC did not listen within 10 s")

    def _run(self, *command: str) -> str:
        done = subprocess.run(command, env=self._server_env(), capture_output=True, text=True, check=False)
        if done.returncode:
            raise RuntimeError(f"{Path(command[0]).name} failed: {done.stderr.strip() or done.stdout.strip()}")
        return done.stdout

    def _kadmin(self, query: str) -> None:
        self._run(_sbin("kadmin.local"), "-r", self.realm, "-q", query)

    def add_service(self, name: str, keytab: Path | None = None) -> str:
        """A service principal (kafka/HOST), its keys written to `keytab` (default: service_keytab)."""
        principal = f"{name}@{self.realm}"
        self._kadmin(f"addprinc -randkey {principal}")
        self._kadmin(f"ktadd -k {keytab or self.service_keytab} {principal}")
        return principal

    def add_user(self, name: str, keytab: Path | None = None, password: str | None = None) -> str:
        """A client principal, with pre-authentication required (as production realms have it);
        its keys go to `keytab` (default: client_keytab), or it gets `password` instead."""
        principal = f"{name}@{self.realm}"
        if password is not None:
            self._kadmin(f"addprinc +requires_preauth -pw {password} {principal}")
        else:
            self._kadmin(f"addprinc +requires_preauth -randkey {principal}")
            self._kadmin(f"ktadd -k {keytab or self.client_keytab} {principal}")
        return principal

    def delete(self, principal: str) -> None:
        self._kadmin(f"delprinc -force {principal}")

    def rekey(self, principal: str, keytab: Path) -> None:
        """New keys for `principal` (kvno + 1), written to `keytab`: keytabs exported before hold stale keys."""
        self._kadmin(f"ktadd -k {keytab} {principal}")

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            self._process.wait(timeout=10)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._directory.cleanup()
