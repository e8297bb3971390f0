"""Starting or joining Ray for ``--ray [ADDRESS]`` (Figure 3's jobs, the large path's sequence
checks): one definition of the refusals and of the start-up, shared by both.

Ray is an optional extra (``pip install -e ".[cluster]"``); only :func:`ray_session` imports
it, and only when ``--ray`` is given. Without an address (or with ``local``) a local Ray
instance starts on this machine (``num_cpus`` = the cores unless given, no dashboard, the
caller's ``HEADPROMPT_CACHE`` passed to the workers); with one, the driver joins that cluster
after a TCP check of ``host:port``. A Ray this process already runs is reused and left running.
"""

from __future__ import annotations

import contextlib
import os

from ...models.exceptions import InputError

__all__ = ["ray_session"]


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse a ``host:port`` (or ``ray://host:port``) that accepts no TCP connection within
    ``timeout`` seconds, before Ray retries for minutes and logs each attempt on stderr.
    Other forms (``auto``) are left to Ray.

    Raises:
        InputError: one line naming the address and the reason.
    """
    import socket

    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise InputError(f"--ray {address}: cannot reach the Ray cluster there ({exc.strerror or exc}); "
                         "start one with `ray start --head`, or omit the address for a local Ray") from None


@contextlib.contextmanager
def ray_session(address: str | None, *, num_cpus: int | None = None):
    """The ``ray`` module, initialised for ``address`` (module docstring); shut down on exit
    when this call started it.

    Raises:
        InputError: Ray is not installed, or the cluster at ``address`` cannot be reached or
            joined, or a local instance cannot start.
    """
    try:
        import ray
    except ImportError:
        raise InputError('--ray: Ray is not installed; install the extra with pip install -e ".[cluster]"') from None
    remote = bool(address) and address != "local"
    started = False
    if not ray.is_initialized():
        kwargs = {"include_dashboard": False, "logging_level": "ERROR", "log_to_driver": False}
        if remote:
            _check_reachable(address)
        try:
            if remote:
                ray.init(address=address, **kwargs)
            else:
                cache = os.environ.get("HEADPROMPT_CACHE")
                env = {"env_vars": {"HEADPROMPT_CACHE": cache}} if cache else None
                ray.init(num_cpus=num_cpus or os.cpu_count(), runtime_env=env, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"the Ray cluster at {address}" if remote else "a local Ray instance"
            raise InputError(f"--ray: cannot start or join {where} ({(str(exc).splitlines() or [''])[0]})") from None
        started = True
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()
