"""Instance and witness I/O of a theorem report: the instance a theorem is checked on (a file or an
object, of the right kind, with a task), the witness a user gives (a file, a dict or a witness
object, through the one reader), the note about a witness an instance file carries, and the
saving of the checked instance with its witness (``--out``)."""

from __future__ import annotations

from ...models.exceptions import InputError, InstanceFileError

__all__ = ["load_task_instance", "instance_witness_note", "resolve_witness", "save_checked_instance"]


def load_task_instance(path, theorem_id: str, *, memory: bool):
    """An exact instance for a theorem, from a file path or an instance object: the right kind
    (vanilla or memory HMM) with a task.

    Raises:
        InputError: the wrong kind for the theorem, or a float instance object;
        InstanceFileError: no ``mu``.
    """
    from ...models.hmm.values import HMM, MemoryHMM
    from ...models.hmm.files import load_instance

    from ...models.hmm.large import LargeHMM

    if isinstance(path, LargeHMM):
        raise InputError(f"a LargeHMM (the sparse exact form of a large vanilla HMM) is checked by Theorems 3.3 "
                         f"and 3.6, not {theorem_id}")
    if isinstance(path, (HMM, MemoryHMM)):
        model, path = path, "the instance"
        if not model.exact:
            raise InputError("the instance has float entries; theorem checks are exact: convert it "
                             "explicitly first (rationalize=THRESHOLD here, or "
                             "headprompt.models.hmm.rationalize.rationalize(model))")
    else:
        model = load_instance(path, exact=True)
    if not isinstance(model, MemoryHMM if memory else HMM):
        found, other = ("hmm", "3.3 or 3.6") if memory else ("memory-hmm", "4.3, 4.6 or C.6")
        raise InputError(f"{path}: Theorem {theorem_id} is about {'memory-augmented' if memory else 'vanilla'} "
                         f"HMMs, found kind {found!r} (use theorem {other})")
    if model.mu is None:
        raise InstanceFileError(f"{path}: the instance has no task vector \"mu\"; add one to check a theorem")
    return model



def instance_witness_note(args, theorem_id: str, model, *, large: int | None = None) -> str | None:
    """The ``--hmm`` file's own ``"witness"`` entry (``--out`` saves the checked witness there so
    that a run can be replayed): validated, never used in place of the construction silently.

    A JSON entry must be a witness object for a known theorem whose kind (vanilla or memory)
    matches the instance, with parameters of the right types and shapes for it (the one reader,
    :func:`headprompt.constructions.witnesses.witness_from_dict`); a malformed entry is bad
    input. Without ``--witness`` the entry is not checked (the paper's construction is), and the
    one-line note returned says so and how to check it (``--witness`` naming the same file, which
    reads an instance file's ``"witness"``). ``.npz`` witness entries (``witness.u``,
    ``witness.b``) are typed by the ``.npz`` reader; ``--witness`` reads JSON only, so the note
    says to save them as a JSON witness file (on the large-model path, above ``large`` states,
    no witness is read at all). ``None`` when there is no entry, no file (an instance object) or
    ``--witness`` was given.

    Raises:
        InstanceFileError: the entry is not a witness object, names an unknown theorem or a
            theorem about the other kind of HMM; WitnessError: a parameter's type or shape.
    """
    import os

    from ...constructions.witnesses import THEOREM_PARAMETERS, witness_from_dict
    from ...models.hmm.files import read_json
    from ...models.hmm.npz import is_npz
    from ...models.hmm.values import MemoryHMM
    from ..checks.registry import theorem_spec

    path = getattr(args, "hmm", None)
    if not isinstance(path, (str, os.PathLike)):
        return None
    path = os.fspath(path)
    given = getattr(args, "witness", None) is not None
    shown = getattr(args, "shown", lambda name, value: f"--{name} {value!r}")    # as the user wrote options
    option = getattr(args, "option", lambda name: f"--{name}")
    if is_npz(path):
        import zipfile

        try:
            with zipfile.ZipFile(path) as zf:
                names = [n for n in zf.namelist() if n.startswith("witness.")]
        except (OSError, zipfile.BadZipFile):
            return None                  # the instance reader has already named what is wrong
        if not names or given:
            return None
        if large is not None:
            return (f"{path} holds a witness (witness.* entries) that was not checked: above {large} states "
                    f"or tokens only the paper's construction is checked ({option('witness')} is not "
                    "supported there yet)")
        return (f"{path} holds a witness (witness.* entries) that was not checked: this run checks the paper's "
                f"construction; {option('witness')} reads JSON witness files, so save it as one "
                "({\"theorem\": ..., \"u\": [...], \"b\": [...]}) to check it")
    data = read_json(path)
    if not isinstance(data, dict) or "witness" not in data:
        return None
    raw = data["witness"]
    where = f"{path}: \"witness\""
    if not isinstance(raw, dict):
        found = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(raw), "a number")
        raise InstanceFileError(f"{where}: expected a JSON object holding the witness's parameters (as a --witness "
                                f"file holds them, e.g. {{\"theorem\": \"3.6\", \"u\": [...], \"b\": [...]}}), "
                                f"found {found}")
    for_id = str(raw.get("theorem", theorem_id))
    if for_id not in THEOREM_PARAMETERS:
        raise InstanceFileError(f"{where}: names theorem {raw.get('theorem')!r}; expected one of "
                                f"{', '.join(THEOREM_PARAMETERS)}")
    memory = theorem_spec(for_id).memory
    if memory != isinstance(model, MemoryHMM):
        raise InstanceFileError(f"{where}: is a witness for Theorem {for_id}, about "
                                f"{'memory-augmented' if memory else 'vanilla'} HMMs, but the instance is a "
                                f"{'memory-augmented' if isinstance(model, MemoryHMM) else 'vanilla'} HMM")
    witness_from_dict(raw, for_id, model, source=where)          # types and shapes: bad input if wrong
    if given:
        return None
    if for_id == theorem_id:
        return (f"{path} holds a witness that was not checked: this run checks the paper's construction; "
                f"to check the file's witness instead, add {shown('witness', path)}")
    return (f"{path} holds a witness for Theorem {for_id}, not checked by this Theorem {theorem_id} run (it checks "
            f"the paper's construction); to check it, run Theorem {for_id} with {shown('witness', path)}")



def resolve_witness(given, theorem_id: str, model):
    """``(witness, H_star)`` from what the user gave: the path of a witness file, a dict in
    the witness-file format, or a witness object (``LinearHeadWitness``, ``PromptWitness``,
    ``AttentionWitness``); all three go through the one reader
    (:func:`headprompt.constructions.witnesses.witness_from_dict`), so they are validated alike.

    Raises:
        InputError: an unreadable file, a witness for another theorem, a missing parameter or a
            parameter of the wrong shape.
    """
    from ...constructions import witnesses

    if isinstance(given, dict):
        return witnesses.witness_from_dict(given, theorem_id, model, source="witness")
    if isinstance(given, str):
        return witnesses.read_witness(given, theorem_id, model)
    as_dict = getattr(given, "as_dict", None)
    if as_dict is None:
        raise InputError(f"witness {given!r}: expected a witness file, a dict or a witness object")
    data = as_dict()
    data.setdefault("theorem", theorem_id)
    return witnesses.witness_from_dict(data, theorem_id, model, source="witness")



def save_checked_instance(model, path, *, witness: dict | None, meta: dict | None = None) -> str | None:
    """Save the instance a run checked (``--out``), with its witness; returns None, or a note when
    the witness could not go into the file. A ``.npz`` file holds exact values as int64
    numerators over per-column denominators, and an exact witness of a small model often needs
    more: then the instance is saved without the witness (the run's verdict, a proof, keeps its
    exit code) and the note says so and how to keep it (a ``.json`` file has no such limit).
    An instance that does not fit either is refused as before (exit 2)."""
    from ...models.exceptions import LimitError
    from ...models.hmm.files import save_instance
    from ...models.hmm.npz import is_npz

    try:
        save_instance(model, path, witness=witness, meta=meta)
        return None
    except LimitError as exc:
        if witness is None or not is_npz(path):
            raise
        # the instance alone: if it does not fit either, that is the error to report (exit 2)
        save_instance(model, path, witness=None, meta=meta)
        return (f"{path} holds the instance without its witness ({str(exc).split(';')[0]}): replaying it with "
                f"--hmm rebuilds the construction; save to a .json file to keep the witness itself")
