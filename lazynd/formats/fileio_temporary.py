"""The temporary files behind atomic writes: their names, permissions and clean-up.

:mod:`lazynd.formats.fileio` writes every local file to a temporary beside its target
and moves it over the target when complete.  This module makes those
temporaries: named ``.lazynd-tmp-<pid>-<machine>-<random>-<name>``, created
with the permissions the umask gives (as a plain ``open`` would; unlike
``tempfile.mkstemp``'s ``0o600``), and removed at the next save to their
directory when the process that made them is gone.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import socket
import stat
from typing import IO

TEMPORARY_PREFIX = ".lazynd-tmp-"
"""How the name of every temporary file lazynd writes begins."""


def create_temporary(directory: str, name: str) -> tuple[str, IO[bytes]]:
    """Create and open a new, uniquely named temporary for target ``name`` in ``directory``.

    ``os.open`` with mode 0o666 lets the umask decide the permissions, as a
    plain ``open`` would; ``tempfile.mkstemp`` would leave the result at 0o600.
    """
    while True:
        temporary = os.path.join(directory, temporary_basename(name))
        try:
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        return temporary, os.fdopen(descriptor, "wb")


def temporary_basename(name: str) -> str:
    # The target's name is kept for people who look; cut so the whole stays under 255 bytes.
    return f"{TEMPORARY_PREFIX}{os.getpid()}-{_MACHINE}-{secrets.token_hex(4)}-{name[:120]}"


def _machine_token() -> str:
    """Eight hex digits naming this host and PID namespace.

    Process ids are only meaningful where they were issued: a temporary made by
    another machine (a shared NFS folder) or another container must not be
    judged by our process table.
    """
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    identity = f"{socket.gethostname()}\0{namespace}".encode()
    return hashlib.blake2s(identity, digest_size=4).hexdigest()


_MACHINE = _machine_token()
_STALE_PATTERN = re.compile(re.escape(TEMPORARY_PREFIX) + r"(\d+)-([0-9a-f]{8})-[0-9a-f]{8}-")


def remove_stale_temporaries(directory: str | os.PathLike[str]) -> list[str]:
    """Delete the temporaries that dead processes of this machine left in ``directory``.

    Called before every local save, so a save killed half-way (``SIGKILL``,
    out of memory) leaves its temporary behind only until the next save to
    the same directory.  Temporaries of live processes, of other machines and
    files of any other name are left alone.

    Parameters
    ----------
    directory : str or os.PathLike
        A local directory.

    Returns
    -------
    list of str
        The paths removed.

    Examples
    --------
    >>> import tempfile
    >>> remove_stale_temporaries(tempfile.mkdtemp())
    []
    """
    removed: list[str] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(TEMPORARY_PREFIX):
            continue
        match = _STALE_PATTERN.match(entry.name)
        if match is None or match.group(2) != _MACHINE or _process_alive(int(match.group(1))):
            continue
        try:
            os.unlink(entry.path)
        except OSError:
            continue  # another process removed it first, or it is not ours to remove
        removed.append(entry.path)
    return removed


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists here; True whenever that cannot be told."""
    if os.name != "posix":
        return True  # os.kill(pid, 0) would send CTRL_C_EVENT on Windows
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # e.g. PermissionError: it exists under another user
    return True


def keep_permissions(target: str, temporary: str) -> None:
    """Give ``temporary`` the permission bits of an existing ``target``, as rewriting it in place would."""
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return  # a new file: the umask decided already
    os.chmod(temporary, mode)


def unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def fsync_directory(directory: str) -> None:
    """Make the rename itself durable; not every platform can open a directory."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
