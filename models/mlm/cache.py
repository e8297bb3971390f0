"""The disk cache of pretrained MLMs and the checkpoints of unfinished pretraining runs.

Weights are cached under ``$HEADPROMPT_CACHE`` (default ``~/.cache/headprompt``) as
``mlm-<key>.pt``, ``key`` a hash of both configs, the HMM's parameters and the seed
(:func:`cache_key`; the device is not part of it); an unfinished run is ``mlm-<key>.partial``.
A checkpoint that cannot be read, or that was written for another key (a foreign file), is
discarded with a warning and the model retrained; a cache directory that is a file or cannot
be written is an :class:`InputError` before any training.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import warnings
from pathlib import Path

import numpy as np
import torch

from ..exceptions import InputError
from .model import CHECKPOINT_FORMAT, MLMConfig, PretrainConfig

__all__ = ["cache_dir", "check_writable_dir", "cache_key", "read_checkpoint", "write_checkpoint"]


def cache_dir() -> Path:
    """``$HEADPROMPT_CACHE`` if set, else ``~/.cache/headprompt``."""
    return Path(os.environ.get("HEADPROMPT_CACHE") or Path.home() / ".cache" / "headprompt")


def check_writable_dir(path: Path | str, what: str) -> Path:
    """Create ``path`` if needed and check that files can be written there.

    Raises:
        InputError: ``path`` (or a parent) is a file, or the directory cannot be written.
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise InputError(f"{what}: {path} is a file, not a directory") from None
    except OSError as exc:
        raise InputError(f"{what}: cannot create directory {path} ({exc.strerror})") from None
    if not path.is_dir():
        raise InputError(f"{what}: {path} is not a directory")
    probe = path / f".write-test-{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise InputError(f"{what}: directory {path} is not writable ({exc.strerror})") from None
    return path


def _fingerprint(hmm) -> dict:
    """Type name plus a sha256 of every array (as float64) and every scalar field."""
    out = {"type": type(hmm).__name__}
    for f in dataclasses.fields(hmm):
        if f.name.startswith("_"):
            continue
        value = getattr(hmm, f.name)
        if isinstance(value, np.ndarray):
            arr = np.ascontiguousarray(np.asarray(value, dtype=float))
            out[f.name] = [list(arr.shape), hashlib.sha256(arr.tobytes()).hexdigest()]
        else:
            out[f.name] = value if value is None or isinstance(value, (int, float, str)) else repr(value)
    return out


def cache_key(hmm, model_config: MLMConfig, pretrain_config: PretrainConfig, seed: int) -> str:
    """A 20-hex-digit key from both configs, the HMM's parameters and the seed."""
    blob = json.dumps({"format": CHECKPOINT_FORMAT, "model": dataclasses.asdict(model_config),
                       "pretrain": dataclasses.asdict(pretrain_config), "seed": int(seed),
                       "hmm": _fingerprint(hmm.to_float())}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def read_checkpoint(path: Path, key: str, device: torch.device) -> dict | None:
    """The checkpoint at ``path`` if it is readable and was written for ``key``; otherwise a
    warning, the file is removed, and ``None`` (the caller retrains)."""
    try:
        ckpt = torch.load(path, map_location=device, weights_only=True)
        if not isinstance(ckpt, dict) or ckpt.get("key") != key or ckpt.get("format") != CHECKPOINT_FORMAT:
            raise ValueError("written for other settings (foreign checkpoint)")
        return ckpt
    except Exception as exc:   # noqa: BLE001 - any unreadable file is discarded, never fatal
        warnings.warn(f"discarding unusable checkpoint {path} ({type(exc).__name__}: "
                      f"{str(exc).splitlines()[0] if str(exc) else 'unreadable'}); retraining", stacklevel=3)
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def write_checkpoint(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save(payload, tmp)
    os.replace(tmp, path)
