"""The tests' own hosts: network namespaces on this machine, made and removed by the tests with
iproute2. The services host is the tests' own namespace; each other host joins it by two links,
one to Temporal's network and one to the store's, so a test can cut a host off from Temporal
alone (it keeps reaching the store, as a worker behind a broken route to the cluster does) or
from both.

Addresses are in 127.0.0.0/8 but not 127.0.0.1, with route_localnet on, as this machine's
loopback-only traffic rules want; each run takes networks of its own so runs never collide."""

from __future__ import annotations

import fcntl
import re
import secrets
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


def _ip(*arguments: str, namespace: str | None = None) -> None:
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    subprocess.run([*prefix, "ip", *arguments], check=True, capture_output=True, timeout=30)


def _local_routing(device: str, namespace: str | None = None) -> None:
    prefix = ["ip", "netns", "exec", namespace] if namespace else []
    for name in ("all", device):
        subprocess.run(
            [*prefix, "sysctl", "-qw", f"net.ipv4.conf.{name}.route_localnet=1"],
            check=True,
            capture_output=True,
            timeout=30,
        )


_LOCK = Path(tempfile.gettempdir()) / "icepurge-net-hosts.lock"
_SUBNETS = range(100, 220, 2)


def _free_subnet() -> int:
    """A pair 127.<n>.0.0/16, 127.<n+1>.0.0/16 with no address on this machine yet."""
    listed = subprocess.run(
        ["ip", "-o", "-4", "addr"], check=True, capture_output=True, text=True, timeout=30
    )
    taken = {int(octet) for octet in re.findall(r"inet 127\.(\d+)\.", listed.stdout)}
    return next(subnet for subnet in _SUBNETS if not {subnet, subnet + 1} & taken)


def unavailable() -> str | None:
    """Why this machine can't make hosts (None: it can)."""
    probe = f"icepurge-probe-{secrets.token_hex(3)}"
    try:
        subprocess.run(["ip", "netns", "add", probe], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.CalledProcessError) as error:
        return f"no network namespaces here (`ip netns add` needs iproute2 and CAP_NET_ADMIN): {error}"
    subprocess.run(["ip", "netns", "del", probe], check=False, capture_output=True, timeout=30)
    return None


@dataclass(frozen=True)
class Host:
    name: str
    temporal_link: str
    store_link: str

    def command(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]


@dataclass
class NetHosts:
    """Two bridges on the services host (Temporal's network and the store's) and the hosts
    joined to them."""

    tag: str = field(default_factory=lambda: "ip" + secrets.token_hex(2))
    subnet: int = 0
    hosts: list[Host] = field(default_factory=list)

    @property
    def temporal_address(self) -> str:
        return f"127.{self.subnet}.0.1"

    @property
    def store_address(self) -> str:
        return f"127.{self.subnet + 1}.0.1"

    def _bridges(self) -> list[tuple[str, int]]:
        return [(f"{self.tag}bt", self.subnet), (f"{self.tag}bs", self.subnet + 1)]

    def open(self) -> None:
        """Takes two networks no other run on this machine holds: chosen and made under a lock,
        so two test processes starting together never pick the same."""
        with _LOCK.open("a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.subnet = _free_subnet()
            self._make_bridges()

    def _make_bridges(self) -> None:
        for bridge, octet in self._bridges():
            _ip("link", "add", bridge, "type", "bridge")
            _ip("addr", "add", f"127.{octet}.0.1/16", "dev", bridge)
            _ip("link", "set", bridge, "up")
            _local_routing(bridge)

    def add(self) -> Host:
        index = len(self.hosts) + 1
        host = Host(f"{self.tag}h{index}", f"{self.tag}t{index}", f"{self.tag}s{index}")
        _ip("netns", "add", host.name)
        self.hosts.append(host)
        _ip("link", "set", "lo", "up", namespace=host.name)
        for (bridge, octet), link in zip(self._bridges(), (host.temporal_link, host.store_link), strict=True):
            inside = f"{link}i"
            _ip("link", "add", link, "type", "veth", "peer", "name", inside)
            _ip("link", "set", link, "master", bridge)
            _ip("link", "set", link, "up")
            _ip("link", "set", inside, "netns", host.name)
            _ip("addr", "add", f"127.{octet}.0.{10 + index}/16", "dev", inside, namespace=host.name)
            _ip("link", "set", inside, "up", namespace=host.name)
            _local_routing(inside, host.name)
        return host

    def python_processes(self, host: Host) -> list[int]:
        """The Python processes running on the host (a Spark executor's Python workers)."""
        listed = subprocess.run(
            ["ip", "netns", "pids", host.name], check=True, capture_output=True, text=True, timeout=30
        )
        found = []
        for pid in listed.stdout.split():
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if Path(command.decode(errors="replace")).name.startswith("python"):
                found.append(int(pid))
        return found

    def address(self, host: Host) -> str:
        """The host's address on Temporal's network, which is also the hosts' own network."""
        return f"127.{self.subnet}.0.{10 + self.hosts.index(host) + 1}"

    def cut(self, host: Host, *, store_too: bool = False) -> None:
        """Takes the host's link to Temporal down (and to the store, with `store_too`): its
        processes keep running and don't know."""
        _ip("link", "set", host.temporal_link, "down")
        if store_too:
            _ip("link", "set", host.store_link, "down")

    def restore(self, host: Host) -> None:
        for link in (host.temporal_link, host.store_link):
            _ip("link", "set", link, "up")

    def close(self) -> None:
        for host in self.hosts:
            for link in (host.temporal_link, host.store_link):
                subprocess.run(["ip", "link", "del", link], check=False, capture_output=True, timeout=30)
            subprocess.run(["ip", "netns", "del", host.name], check=False, capture_output=True, timeout=30)
        for bridge, _ in self._bridges():
            subprocess.run(["ip", "link", "del", bridge], check=False, capture_output=True, timeout=30)
        self.hosts.clear()


@contextmanager
def net_hosts() -> Iterator[NetHosts]:
    hosts = NetHosts()
    try:
        hosts.open()
        yield hosts
    finally:
        hosts.close()
