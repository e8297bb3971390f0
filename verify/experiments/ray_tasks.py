"""Figure 3's jobs as Ray tasks (``verify experiment ... --ray [ADDRESS]``).

Ray is an optional extra (``pip install -e ".[cluster]"``); only this module imports it, and
only when ``--ray`` is given. Without an address a local Ray instance starts on this machine
(``num_cpus`` = the cores, no dashboard); with one, the driver joins that cluster. Each
(setting, trial) job is one task (``num_gpus=1`` when the job runs on CUDA, else one CPU); the
same :func:`verify.experiment_jobs.run_job_safely` runs inside, so the results equal an
in-process run's with the same seeds. Results come back to the driver, which caches each as it
arrives, so an interrupted sweep resumes.
"""

from __future__ import annotations

import os
from typing import Callable

from ...models.exceptions import InputError

__all__ = ["run_on_ray"]


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse a ``host:port`` (or ``ray://host:port``) that accepts no TCP connection within
    ``timeout`` seconds, before Ray retries for minutes and logs each attempt on stderr.
    Other forms (``auto``, ``local``) are left to Ray.

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


def run_on_ray(specs: list[dict], address: str | None, on_result: Callable[[dict, dict], None], *,
               num_cpus: int | None = None) -> None:
    """Run every spec as a Ray task and call ``on_result(spec, result)`` as each finishes.

    Raises:
        InputError: Ray is not installed, or the cluster at ``address`` cannot be reached.
    """
    try:
        import ray
    except ImportError:
        raise InputError('--ray: Ray is not installed; install the extra with pip install -e ".[cluster]"') from None
    from .jobs import run_job_safely

    started = False
    if not ray.is_initialized():
        kwargs = {"include_dashboard": False, "logging_level": "ERROR", "log_to_driver": False}
        if address:
            _check_reachable(address)
        try:
            if address:
                ray.init(address=address, **kwargs)
            else:
                cache = os.environ.get("HEADPROMPT_CACHE")
                env = {"env_vars": {"HEADPROMPT_CACHE": cache}} if cache else None
                ray.init(num_cpus=num_cpus or os.cpu_count(), runtime_env=env, **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise InputError(f"--ray: cannot start or join {where} ({(str(exc).splitlines() or [''])[0]})") from None
        started = True
    try:
        remote = ray.remote(run_job_safely)
        pending = {}
        for spec in specs:
            opts = {"num_gpus": 1, "num_cpus": 1} if spec["device"].startswith("cuda") else {"num_cpus": 1}
            pending[remote.options(**opts).remote(spec)] = spec
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                spec = pending.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as exc:   # noqa: BLE001 - a lost worker fails its job only
                    from .jobs import job_key

                    result = {"key": job_key(spec), "error": f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"}
                on_result(spec, result)
    finally:
        if started:
            ray.shutdown()
