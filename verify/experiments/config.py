"""Figure 3's configurations: the scales, and a config file that overrides any hyperparameter.

A :class:`Scale` fixes everything an experiment run needs: the MLM's architecture
(:class:`models.mlm.MLMConfig`), pretraining and its quality gate
(:class:`models.mlm.PretrainConfig`), the downstream data (:class:`models.tuning.TaskConfig`) and
tuning (:class:`models.tuning.TuneConfig`), the settings and the trial counts. ``--config FILE``
(TOML or JSON) overrides any field, e.g.::

    trials_left = 5
    hidden_sizes = [4, 30]
    [pretrain]
    max_steps = 8000
    [tune]
    epochs = 20

The downstream quality gate (``gate_sequences`` fresh held-out sequences, TV at position 0, an
upper bound ``mean + gate_z * SE`` held against ``pretrain.gate_tv``) is
:func:`models.mlm.gate.read_gate`.

The departures of each scale from the paper and from the authors' scripts are tabled in the
README ("Departures from the paper and the authors' scripts").
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ...models.hmm.files import read_text_file
from ...models.exceptions import InputError

__all__ = ["SCALE_NAMES", "MEMORY_HMMS", "NUM_TOKENS", "SYNTAX_STATES", "EXPERIMENTS", "SETTING_KEYS", "Scale", "SCALES", "scale_to_dict",
           "scale_from_dict", "load_config_file"]

NUM_TOKENS = 10
SYNTAX_STATES = 4
EXPERIMENTS = ("fig3-left", "fig3-right")
SETTING_KEYS = {"fig3-left": ("hidden_states",), "fig3-right": ("data", "memory_values", "hidden_total")}


def _configs():
    # torch-free callers (``verify --help``) never get here: the config classes live in torch modules
    from ...models.mlm.model import MLMConfig, PretrainConfig
    from ...models.mlm.tuning import TaskConfig, TuneConfig

    return MLMConfig, PretrainConfig, TaskConfig, TuneConfig


@dataclass(frozen=True)
class Scale:
    """Everything a scale fixes: model, pretraining, task and tuning configs, settings, trials."""

    model: object
    pretrain: object
    task: object
    tune: object
    hidden_sizes: tuple = (4, 8, 10, 12, 15, 25, 30)
    memory_values: tuple = (2, 3, 5, 7)
    trials_left: int = 20
    trials_right: int = 5
    memory_hmm: str = "appendix-d"      # fig3-right's memory HMM: "appendix-d" or "hidden" (issue 18)
    hidden_visit: float = 0.3           # the "hidden" HMM's probability of visiting the memory state
    gate_sequences: int = 4096          # downstream gate: fresh held-out sequences, TV at position 0
    gate_z: float = 1.645               # downstream gate: passes when mean + gate_z * SE <= pretrain.gate_tv


def _scales() -> dict:
    MLMConfig, PretrainConfig, TaskConfig, TuneConfig = _configs()
    return {
        "tiny": Scale(
            model=MLMConfig(num_tokens=NUM_TOKENS, block_size=40, n_layer=2, n_head=4, n_embd=48, dropout=0.0),
            pretrain=PretrainConfig(num_documents=1, document_length=40, mask_rate=0.2, batch_size=32,
                                    learning_rate=4e-3, warmup_steps=20, max_steps=150, data="stream",
                                    eval_every=50, stop_at_gate=True, gate_sequences=128, gate_length=17),
            task=TaskConfig(length=16, num_train=300, num_val=100, num_test=200),
            tune=TuneConfig(epochs=3, batch_size=32),
            hidden_sizes=(4, 15), memory_values=(2, 3), trials_left=2, trials_right=2, gate_sequences=256),
        "cpu": Scale(
            model=MLMConfig(num_tokens=NUM_TOKENS, block_size=48, n_layer=2, n_head=4, n_embd=64, dropout=0.0,
                            arch="bigru"),
            pretrain=PretrainConfig(num_documents=1, document_length=48, mask_rate=0.2, batch_size=256,
                                    learning_rate=6e-3, warmup_steps=100, max_steps=5000, data="stream",
                                    eval_every=100, stop_at_gate=True, gate_sequences=1024, gate_length=25,
                                    min_length=25, ema_decay=0.99, stop_tv=0.043),
            task=TaskConfig(length=24, num_train=2000, num_val=250, num_test=500),
            tune=TuneConfig(epochs=5, batch_size=32),
            trials_left=10, trials_right=5),
        "paper": Scale(
            model=MLMConfig(num_tokens=NUM_TOKENS, block_size=512, n_layer=6, n_head=12, n_embd=768, dropout=0.1),
            pretrain=PretrainConfig(gate_length=129, checkpoint_every=1000),
            task=TaskConfig(),
            tune=TuneConfig(),
            trials_left=20, trials_right=5,
            hidden_visit=0.15),     # length 128: about 6 visits of the memory state per sequence
    }


SCALE_NAMES = ("tiny", "cpu", "paper")


class _LazyScales(Mapping):
    """``SCALES`` built on first use, so importing this module does not import torch."""

    def __init__(self):
        self._scales: dict = {}

    def __getitem__(self, key):
        if not self._scales:
            self._scales = _scales()
        return self._scales[key]

    def __iter__(self):
        return iter(SCALE_NAMES)

    def __len__(self):
        return len(SCALE_NAMES)


SCALES = _LazyScales()

_SECTIONS = ("model", "pretrain", "task", "tune")
_TOP = ("hidden_sizes", "memory_values", "trials_left", "trials_right", "memory_hmm", "hidden_visit",
        "gate_sequences", "gate_z")
MEMORY_HMMS = ("appendix-d", "hidden")


def scale_to_dict(scale: Scale) -> dict:
    """The full configuration as plain JSON data (``summary.json``'s ``config``)."""
    out = {k: dataclasses.asdict(getattr(scale, k)) for k in _SECTIONS}
    out.update({k: list(getattr(scale, k)) if isinstance(getattr(scale, k), tuple) else getattr(scale, k)
                for k in _TOP})
    return out


def _fits(annotation: str, value) -> bool:
    """Whether ``value`` (from JSON or TOML) fits a config field annotated ``annotation``
    (``"int"``, ``"float | None"``, ...): bools only where ``bool``, ints where ``float``."""
    kinds = {part.strip() for part in annotation.split("|")}
    if value is None:
        return "None" in kinds
    if isinstance(value, bool):
        return "bool" in kinds
    if isinstance(value, int):
        return bool(kinds & {"int", "float"})
    if isinstance(value, float):
        return "float" in kinds
    return isinstance(value, str) and "str" in kinds


def scale_from_dict(base: Scale, overrides: dict, *, source: str = "config") -> Scale:
    """``base`` with ``overrides`` (the shape of :func:`scale_to_dict`, any subset) applied.

    Raises:
        InputError: an unknown section or field, or a value of the wrong type.
    """
    if not isinstance(overrides, dict):
        raise InputError(f"{source}: expected a table of settings, found {type(overrides).__name__}")
    changes = {}
    for key, value in overrides.items():
        if key in _SECTIONS:
            current = getattr(base, key)
            if not isinstance(value, dict):
                raise InputError(f"{source}: [{key}] must be a table, found {value!r}")
            names = {f.name: f for f in dataclasses.fields(current)}
            for name, v in value.items():
                if name not in names:
                    raise InputError(f"{source}: unknown field {key}.{name} (known: {', '.join(names)})")
                old = getattr(current, name)
                if not _fits(names[name].type, v):
                    raise InputError(f"{source}: {key}.{name} expects {names[name].type} (like {old!r}), found {v!r}")
            changes[key] = dataclasses.replace(current, **{
                n: (float(v) if "float" in names[n].type and isinstance(v, int) else v) for n, v in value.items()})
        elif key in ("hidden_sizes", "memory_values"):
            if not isinstance(value, list) or not value or not all(
                    isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value):
                raise InputError(f"{source}: {key} must be a nonempty list of positive integers, found {value!r}")
            changes[key] = tuple(value)
        elif key == "gate_z":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 10:
                raise InputError(f"{source}: gate_z must be a number in [0, 10), found {value!r}")
            changes[key] = float(value)
        elif key in ("trials_left", "trials_right", "gate_sequences"):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"{source}: {key} must be a positive integer, found {value!r}")
            changes[key] = value
        elif key == "memory_hmm":
            if value not in MEMORY_HMMS:
                raise InputError(f"{source}: memory_hmm must be one of {', '.join(MEMORY_HMMS)}, found {value!r}")
            changes[key] = value
        elif key == "hidden_visit":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
                raise InputError(f"{source}: hidden_visit must be a number in (0, 1), found {value!r}")
            changes[key] = float(value)
        else:
            raise InputError(f"{source}: unknown setting {key!r} (known: {', '.join(_SECTIONS + _TOP)})")
    return dataclasses.replace(base, **changes)


def load_config_file(path: str | Path) -> dict:
    """Read a TOML (``.toml``) or JSON file of overrides.

    Raises:
        InputError: a missing or unreadable file, or one that does not parse.
    """
    path = Path(path)
    try:
        text = read_text_file(path, what="config file (TOML or JSON)")   # a regular file, size-limited
    except InputError as exc:
        raise InputError(f"--config: {exc}") from None
    try:
        if path.suffix.lower() == ".toml":
            import tomllib

            return tomllib.loads(text)
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        kind = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        raise InputError(f"--config: {path} is not valid {kind} ({str(exc).splitlines()[0]})") from None
