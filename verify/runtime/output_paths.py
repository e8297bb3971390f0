"""Output paths probed before any work (SPEC section 2): a file or folder a run will write is shown
writable by writing to it (``os.access`` says yes for root on ``/proc`` and ``/dev/full``), so a
run never computes for minutes and then fails to save. Used by ``check()`` and every subcommand
with ``--out``, ``--certificate``, ``--certificate-dir`` or ``--plan``."""

from __future__ import annotations

from ...models.exceptions import InputError

__all__ = ["check_out_path", "check_out_dir", "probe_writable_file", "probe_writable_dir"]


def check_out_path(path: str | None, *, flag: str = "--out") -> None:
    """Refuse an output path that cannot be written, before any work: a directory, a missing
    or unwritable parent directory, or a target that refuses a write (a read-only file, a full
    device such as ``/dev/full``, a folder such as ``/proc`` that takes no new files, a pipe with
    no reader). ``os.access`` alone is not enough (root passes it on ``/proc`` and ``/dev/full``),
    so the path is probed by writing (:func:`probe_writable_file`).

    Raises:
        InputError: naming the path and the problem.
    """
    import os

    if path is None:
        return
    if path == "":
        raise InputError(f"{flag}: expected a file path, found an empty string")
    if os.path.isdir(path):
        raise InputError(f"{flag} {path}: is a directory; give the path of a file to write")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise InputError(f"{flag} {path}: the directory {parent} does not exist")
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise InputError(f"{flag} {path}: the file is not writable")
    if not os.path.exists(path) and not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {path}: cannot create a file in {parent} (no write permission)")
    probe_writable_file(path, flag=flag)



def probe_writable_file(path: str, *, flag: str = "--out") -> None:
    """Show by writing that ``path`` takes a file, without changing what is there.

    * an existing regular file is opened for appending and nothing is written (its content is
      kept; a read-only file or file system fails the open);
    * an existing non-regular file (a device, a pipe) is opened without blocking and sent a
      zero-byte write: ``/dev/full`` answers ENOSPC, ``/dev/null`` and a terminal accept, a pipe
      with no reader answers ENXIO (writing to it later would hang);
    * a missing file is created (exclusively), sent one byte (a full disk answers ENOSPC) and
      removed again.

    Raises:
        InputError: ``{flag} {path}: cannot write to it (reason)``.
    """
    import errno
    import os
    import stat

    target = os.path.realpath(path)           # a dangling symlink: the file it would create
    created = False
    try:
        try:
            st = os.stat(target)
        except FileNotFoundError:
            st = None
        if st is None:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            created = True
            try:
                os.write(fd, b"\0")
            finally:
                os.close(fd)
        elif stat.S_ISREG(st.st_mode):
            fd = os.open(target, os.O_WRONLY | os.O_APPEND)
            os.close(fd)
        else:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
            try:
                os.write(fd, b"")
            finally:
                os.close(fd)
    except OSError as exc:
        reason = "a pipe with no reader" if exc.errno == errno.ENXIO else (exc.strerror or str(exc))
        raise InputError(f"{flag} {path}: cannot write to it ({reason})") from None
    finally:
        if created:
            try:
                os.unlink(target)
            except OSError:
                pass



def probe_writable_dir(directory: str, *, message: str) -> None:
    """Show by writing that the existing folder ``directory`` takes new files: a temporary file
    is created there, sent one byte and removed (``os.access`` says yes for root on ``/proc``).

    Raises:
        InputError: ``message (reason)``, e.g. ``--certificate-dir D: cannot write a file there``.
    """
    import tempfile

    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".probe-") as f:
            f.write(b"\0")
            f.flush()
    except OSError as exc:
        raise InputError(f"{message} ({exc.strerror or exc})") from None



def check_out_dir(path: str, *, flag: str = "--out") -> None:
    """Refuse an output directory that cannot be used, before any work: an existing path that
    is not a directory, or a directory (or the nearest existing parent) without write access.

    Raises:
        InputError: naming the path and the problem.
    """
    import os

    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError(f"{flag} {path}: exists and is not a directory; give a directory path")
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise InputError(f"{flag} {path}: {probe} is a file, so the directory cannot be created")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"{flag} {path}: {probe} is not writable")
    where = "there" if probe == os.path.abspath(path) else f"in {probe}"
    probe_writable_dir(probe, message=f"{flag} {path}: cannot write a file {where}")
