"""Figure 3's jobs as Ray tasks (``verify experiment ... --ray [ADDRESS]``).

Ray is started or joined by :func:`verify.cluster.ray_session` (only with ``--ray``). Each
(setting, trial) job is one task (``num_gpus=1`` when the job runs on CUDA, else one CPU); the
same :func:`verify.experiment_jobs.run_job_safely` runs inside, so the results equal an
in-process run's with the same seeds. Results come back to the driver, which caches each as it
arrives, so an interrupted sweep resumes.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["run_on_ray"]


def run_on_ray(specs: list[dict], address: str | None, on_result: Callable[[dict, dict], None], *,
               num_cpus: int | None = None) -> None:
    """Run every spec as a Ray task and call ``on_result(spec, result)`` as each finishes.

    Raises:
        InputError: Ray is not installed, or the cluster at ``address`` cannot be reached.
    """
    from ..runtime.cluster import ray_session
    from .jobs import run_job_safely

    with ray_session(address, num_cpus=num_cpus) as ray:
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
