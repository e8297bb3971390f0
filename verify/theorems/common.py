"""Helpers shared by the ``verify`` subcommands: argument parsing of sequences and modes."""

from __future__ import annotations

import re

from ...models.exceptions import InputError, InstanceFileError, SequenceError

__all__ = ["parse_sequence", "MODES", "load_task_instance", "settle_verdict", "label_counts",
           "check_work", "message_bits", "exact_bytes", "MAX_EXACT_BYTES", "check_theorem_flags", "check_out_path", "check_out_dir", "instance_witness_note", "save_checked_instance",
           "probe_writable_file", "probe_writable_dir", "MAX_SECONDS",
           "MAX_TOKENS", "mark_ties"]

MODES = ("exact", "certified", "float")


def parse_sequence(text: str, num_tokens: int, *, name: str = "--seq") -> list[int]:
    """Tokens from ``"0 3 1 2"`` (spaces, commas or newlines).

    Raises:
        SequenceError: empty text, non-integers, or tokens outside ``0..num_tokens-1``.
    """
    stripped = text.strip()
    parts = re.split(r"\s*,\s*|\s+", stripped) if stripped else []
    if not parts:
        raise SequenceError(f"{name}: expected tokens such as \"0 3 1 2\", found nothing")
    tokens = []
    for pos, p in enumerate(parts):
        if not p:
            raise SequenceError(f"{name}: no token at position {pos} (two commas in a row, or a comma at an end)")
        if len(p) > 12 or not re.fullmatch(r"[+-]?[0-9]+", p):      # ASCII digits only (\d would read '١')
            shown = p if len(p) <= 24 else p[:20] + "..."
            raise SequenceError(f"{name}: {shown!r} at position {pos} is not an integer token in 0..{num_tokens - 1}")
        z = int(p)
        if not 0 <= z < num_tokens:
            raise SequenceError(f"{name}: token {z} at position {pos} is outside the vocabulary "
                                f"0..{num_tokens - 1}")
        tokens.append(z)
    return tokens


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
    from .registry import theorem_spec

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


def settle_verdict(report: dict, *, witness_given: bool, failed: dict, construction_error: str | None) -> dict:
    """Set ``report["verdict"]`` (SPEC section 4) and return the failed assumptions.

    A user's witness is judged alone (``verified`` or ``refuted``); otherwise a failed
    assumption or a construction that could not be built gives ``assumptions-fail`` (the
    construction error then counts as the failure when no assumption check failed)."""
    mark_ties(report)
    if witness_given or not (failed or construction_error):
        report["verdict"] = "refuted" if report["counterexample"] else "verified"
        return failed
    report["verdict"] = "assumptions-fail"
    if construction_error and not failed:
        failed = {"construction": {"holds": False, "why": construction_error}}
    report["failed"] = sorted(failed)
    return failed


def mark_ties(report: dict) -> None:
    """Say what exact ties (``mu . p = 0``, label 1 by the ``>=`` rule) contribute to a binary
    report's labels: ``"labels_off_ties"`` counts each label over the sequences that count and
    are not ties, and ``"weak": true`` (with ``"weak_why"``) when a label occurs only on ties, so
    that no sequence strictly on that side of the threshold was checked. Vacuous reports and
    tasks with several classes are left as they are.

    >>> r = {"labels": {"0": 5, "1": 2}, "vacuous": False, "sequences": {"ties": 2}}
    >>> mark_ties(r); r["labels_off_ties"], r["weak"]
    ({'0': 5, '1': 0}, True)
    """
    labels, seqs = report.get("labels"), report.get("sequences") or {}
    if not labels or len(labels) != 2 or "ties" not in seqs:
        return
    ties = int(seqs.get("ties") or 0)
    off = {"0": labels["0"], "1": max(0, labels["1"] - ties)}
    report["labels_off_ties"] = off
    report["weak"] = bool(not report.get("vacuous") and min(off.values()) == 0)
    if report["weak"]:
        side = "0" if off["0"] == 0 else "1"
        report["weak_why"] = (f"every sequence of label {side} that counts is an exact tie (mu . p = 0): the "
                              f"check saw no sequence strictly on that side of the threshold")


def label_counts(expected, classes: int = 2) -> dict:
    """The honest-verdict fields of a report (SPEC section 4) from the ``F*`` labels of the
    sequences that count (memory theorems: those in ``R``): ``labels`` ``{"0": n0, "1": n1}``
    (``{"0": n0, ..., "k-1": n_{k-1}}`` for a task with ``classes = k``) and ``vacuous``, true
    when a label never occurs (or nothing counts), so that the check could not have failed on it.

    >>> label_counts([1, 1, 0])
    {'labels': {'0': 1, '1': 2}, 'vacuous': False}
    >>> label_counts([2, 0, 2], classes=3)
    {'labels': {'0': 1, '1': 0, '2': 2}, 'vacuous': True}
    >>> label_counts([])["vacuous"]
    True
    """
    counts = {str(c): sum(1 for e in expected if e == c) for c in range(classes)}
    return {"labels": counts, "vacuous": min(counts.values()) == 0}


# ---------------------------------------------------------------- work limits (SPEC section 2)

MAX_SECONDS = 600
"""What ``verify theorem`` accepts must finish: estimated seconds above this are refused."""

MAX_TOKENS = 20_000_000
"""Sampled sequences x length (the sampled pool is held in memory)."""

MAX_FLOAT_ENTRIES = 50_000_000
"""Float memory checks hold ``[sequences, length, lifted states]`` arrays (8 bytes each)."""

# Seconds per unit of work, calibrated on this project's 2-core machine, idle (2026-11-25, default
# sizes: vanilla |H| = 10..200, memory 9 and 54 lifted states, lengths 8..32; measured and
# estimated times agree within 2x there). Exact vanilla checks cost about |sequences| x length
# x states^2 x (1 + length/16) big-integer operations (backward messages whose integers grow
# with the length); exact memory checks add a per-position cost (membership in R and the
# attention head in Fractions). Certified mode decides in float with proven error bounds (exact
# only near ties): vanilla per states^2, memory per lifted state (its kernels are per-position
# bound evaluations); a sparse A (the float kernel's sparse path) costs its nonzeros, not
# |H|^2. The adversarial search is :func:`_adversarial_seconds`. Every run also pays about
# a fifth of a second of fixed work (witness, identity, near-tie search, cross-checks), and vanilla runs
# about 1e-5 |H|^2 s more (building the instance, assumption checks, robustness).
_EXACT_RATE = {"hmm": 4e-9, "memory-hmm": 1.2e-8}
_EXACT_PER_POSITION = {"hmm": 0.0, "memory-hmm": 4e-5}
_FLOAT_RATE = 3e-10          # vanilla: per sequence, position and states^2 (certified and float kernels)
_FLOAT_RATE_MEMORY = 2e-7   # memory: per sequence, position and lifted state
_FIXED_SECONDS = 0.2
_PER_STATE2 = 1e-5          # vanilla: building, assumption checks and robustness grow with |H|^2


def _float_units(model, states: int) -> float:
    """Work per sequence position of the vanilla float kernel: ``|H|^2`` for a dense ``A``, or
    its nonzeros plus ``|H|`` where the kernel multiplies by a sparse ``A``
    (:data:`~headprompt.models.inference.floats.SPARSE_MIN_STATES` states or more, density at
    most ``SPARSE_MAX_DENSITY``)."""
    import numpy as np

    from ...models.inference.floats import SPARSE_MAX_DENSITY, SPARSE_MIN_STATES

    A = getattr(model, "A", None)
    if A is None or states < SPARSE_MIN_STATES:
        return float(states * states)
    nnz = int(np.count_nonzero(model.to_float().A if getattr(model, "exact", False) else np.asarray(A, dtype=float)))
    return float(nnz + states) if nnz <= SPARSE_MAX_DENSITY * states * states else float(states * states)


def _adversarial_seconds(tokens: int, states: int, length: int) -> float:
    """The float adversarial search: 3 sweeps over the positions of 200 sequences, each a few
    products of ``2 x 200`` rows by ``|H| x |H|`` and ``|H| x |X|``, plus Python overhead."""
    return 3 * length * (1e-3 + 200 * (2 * states * states + 2 * states * tokens) * 1e-10)


AUTO_EXACT_SECONDS = 2.0
"""Without ``--mode``, a run whose exact estimate is at most this stays exact (no float touches
any value, at no visible cost); above it the faster proof runs: certified when its estimate is
lower (the usual case), else exact."""

AUTO_CERTIFIED_MAX_LENGTH = 256
"""Without ``--mode``, certified arithmetic replaces exact only up to this length: on far longer
sequences some message entries fall below the underflow guard and whole batches go back to
exact arithmetic (:func:`check_fallback`)."""


def exact_seconds(sequences: int, length: int, states: int, *, memory: bool = False) -> float:
    """The estimated time of exact checks of ``sequences`` sequences of ``length`` tokens."""
    kind = "memory-hmm" if memory else "hmm"
    return sequences * length * (_EXACT_PER_POSITION[kind]
                                 + _EXACT_RATE[kind] * states * states * (1 + length / 16))


def float_seconds(sequences: int, length: int, states: int, *, memory: bool = False, model=None) -> float:
    """The estimated time of the float kernels (certified and float modes) on ``sequences``
    sequences of ``length`` tokens (certified adds only the exact redo of near-ties); a vanilla
    ``model`` lets a sparse ``A`` count its nonzeros (:func:`_float_units`)."""
    if memory:
        return _FLOAT_RATE_MEMORY * sequences * length * states
    return _FLOAT_RATE * sequences * length * _float_units(model, states) * (1 + length / 64)


def work_estimates(model, sequences: int, length: int, *, exhaustive: bool) -> tuple[float, float]:
    """``(exact seconds, certified/float seconds)`` of a whole ``verify theorem`` run on
    ``model``: the fixed work, the vanilla per-|H|^2 work and adversarial search (sampled sets),
    and the checks of ``sequences`` sequences of ``length`` tokens in each arithmetic."""
    from ...models.hmm.values import MemoryHMM

    memory = isinstance(model, MemoryHMM)
    states = model.lift().num_states if memory else model.num_states
    base = _FIXED_SECONDS
    if not memory:
        base += _PER_STATE2 * states * states
        if not exhaustive:
            base += _adversarial_seconds(model.num_tokens, states, length)
    return (base + exact_seconds(sequences, length, states, memory=memory),
            base + float_seconds(sequences, length, states, memory=memory, model=model))


def check_fallback(sequences: int, length: int, states: int, *, memory: bool = False, model=None) -> None:
    """Refuse an exact fallback batch (sequences the certified bound could not decide) that
    would run past :data:`MAX_SECONDS`, instead of starting it.

    Raises:
        LimitError: naming the batch, the estimate and the way forward.
    """
    from ...models.exceptions import LimitError

    seconds = exact_seconds(sequences, length, states, memory=memory)
    if model is not None and getattr(model, "exact", False):
        bits = message_bits(model, length)
        need = exact_bytes(sequences, length, states, bits)
        if need > MAX_EXACT_BYTES:
            raise LimitError(f"{sequences} sequences of length {length} could not be decided by the certified bound "
                             f"(near-ties) and redoing them exactly would hold about {need / 2 ** 30:.1f} GiB of "
                             f"messages (integers of up to {bits:.0f} bits, estimated on a prefix); the limit is "
                             f"{MAX_EXACT_BYTES // 2 ** 30} GiB (use a shorter --length or fewer --samples)")
    if seconds > MAX_SECONDS:
        raise LimitError(f"{sequences} sequences of length {length} could not be decided by the certified bound "
                         f"(their messages come too close to underflow) and redoing them exactly would take about "
                         f"{seconds / 60:.0f} minutes (estimate); the limit is {MAX_SECONDS // 60} minutes "
                         "(use a shorter --length or fewer --samples)")


MAX_EXACT_BYTES = 4 * 2 ** 30
"""Exact checks keep the backward messages of every distinct suffix; their estimated size
(:func:`exact_bytes`) above this is refused (or, without ``--mode``, answered in certified mode)."""


def message_bits(model, length: int, *, probe: int = 12) -> float:
    """Bits of the largest integer in an exact backward message after ``length`` steps,
    measured on a short prefix and extrapolated linearly (each step multiplies by the integer
    ``A`` and ``W`` entries, so the size grows by about the same number of bits per step).

    Measured on the tokens that make the integers grow fastest (the column of ``W_int`` with the
    largest entries, repeated), so the estimate is an upper bound for typical sequences."""
    from ...models.hmm.integer import column, integer_hmm

    chain = model.lift() if hasattr(model, "lift") else model
    ih = integer_hmm(chain)
    steps = max(1, min(probe, length))
    z = max(range(ih.num_tokens), key=lambda k: max(ih.W_rows[k]))
    beta = column([1] * ih.num_states)
    for _ in range(steps):
        beta = ih.step_backward(z, beta)
    bits = max(int(beta[r, 0]).bit_length() for r in range(beta.nrows()))
    return max(1.0, bits / steps) * length


def exact_bytes(sequences: int, length: int, states: int, bits: float) -> float:
    """Estimated memory of an exact check: up to ``sequences x length`` distinct suffixes, each
    with a backward message of ``states`` integers of up to ``bits`` bits (half that on
    average over the positions), plus about 48 bytes of overhead per integer."""
    return sequences * length * states * (bits / 16 + 48)


def check_work(args, model) -> tuple[str, str | None]:
    """Refuse, before any sampling or checking, a ``verify theorem`` run that cannot finish:
    the sampled pool beyond :data:`MAX_TOKENS`, a float memory check beyond
    :data:`MAX_FLOAT_ENTRIES`, or an estimated time beyond :data:`MAX_SECONDS`.

    Returns ``(mode, note)``: the arithmetic mode to run, ``args.mode`` when given; without
    one, ``"exact"``, or ``"certified"`` (a proof as well) when exact arithmetic would exceed
    the limit and certified would not, with ``note`` saying why (else ``None``).

    Raises:
        LimitError: naming the sizes, the estimate and the limit, and the way forward.
    """
    from ...models.exceptions import LimitError
    from ...models.hmm.values import MemoryHMM

    memory = isinstance(model, MemoryHMM)
    states = model.lift().num_states if memory else model.num_states
    X = model.num_tokens
    exhaustive = bool(getattr(args, "exhaustive", False))
    length = args.length if args.length is not None else (4 if exhaustive else 8)
    if exhaustive:
        count, power = 0, 1
        for _ in range(length):
            power *= X
            count += power
            if count > 10**12:
                break
        what = f"--exhaustive --length {length} ({count if count <= 10**12 else 'more than 10^12'} sequences over {X} tokens)"
        how = "a shorter --length, or sampled sequences (--samples N without --exhaustive)"
    else:
        count = int(args.samples or 0) + 200 + X * X
        if (args.samples or 0) * length > MAX_TOKENS:
            raise LimitError(f"--samples {args.samples} x --length {length} = {args.samples * length} sampled tokens; "
                             f"the limit is {MAX_TOKENS} (use fewer --samples or a shorter --length)")
        what = f"--samples {args.samples} at --length {length}"
        how = "fewer --samples or a shorter --length"
    mode = args.mode
    if mode == "float" and memory and count * length * states > MAX_FLOAT_ENTRIES:
        raise LimitError(f"{what} on a lifted chain of {states} states needs {count * length * states} float "
                         f"entries; the limit is {MAX_FLOAT_ENTRIES} (use {how})")
    exact_total, float_total = work_estimates(model, count, length, exhaustive=exhaustive)
    note = None
    if mode is None:                  # the faster proof: certified decides in float with proven bounds
        faster = float_total < exact_total and float_total <= MAX_SECONDS and exact_total > AUTO_EXACT_SECONDS
        mode = "certified" if faster and length <= AUTO_CERTIFIED_MAX_LENGTH else "exact"
        if mode == "certified":
            note = (f"certified: the faster proof here (about {float_total:.1f} s against {exact_total:.1f} s "
                    "in exact arithmetic, estimates); certified verdicts are proofs as well (give --mode exact "
                    "to insist)")

    def _check_seconds(seconds: float) -> None:
        if seconds > MAX_SECONDS:
            kind = "lifted" if memory else "hidden"
            raise LimitError(f"{what} on {states} {kind} states would take about {seconds / 60:.0f} minutes "
                             f"(estimate); the limit is {MAX_SECONDS // 60} minutes (use {how}"
                             + (", or --mode certified (still a proof)"
                                if mode == "exact" and length <= AUTO_CERTIFIED_MAX_LENGTH
                                and float_total <= MAX_SECONDS else "") + ")")

    if mode == "exact" and getattr(model, "exact", True):
        _check_seconds(exact_total)   # the cheap estimate first: no exact work on a run refused anyway
        bits = message_bits(model, length)
        need = exact_bytes(count, length, states, bits)
        if need > MAX_EXACT_BYTES:
            if args.mode is None and length <= AUTO_CERTIFIED_MAX_LENGTH and float_total <= MAX_SECONDS:
                mode = "certified"
                note = (f"certified: exact arithmetic would hold about {need / 2 ** 30:.1f} GiB of messages "
                        f"(integers of up to {bits:.0f} bits at length {length}, estimated on a prefix; the "
                        f"limit is {MAX_EXACT_BYTES // 2 ** 30} GiB), and certified verdicts are proofs as well")
            else:
                raise LimitError(f"{what} on {states} states would hold about {need / 2 ** 30:.1f} GiB of exact "
                                 f"messages (integers of up to {bits:.0f} bits at length {length}, measured on a "
                                 f"prefix and extrapolated); the limit is {MAX_EXACT_BYTES // 2 ** 30} GiB (use {how}"
                                 + (", or --mode certified (still a proof)"
                                    if length <= AUTO_CERTIFIED_MAX_LENGTH and float_total <= MAX_SECONDS else "")
                                 + ")")
    _check_seconds(exact_total if mode == "exact" else float_total)
    return mode, note


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


def check_theorem_flags(args, *, defaults: dict, option=lambda name: f"--{name}") -> None:
    """Refuse flags that do not apply to the request, naming the flag (never a default the
    user did not type), then fill in the defaults of the flags left out.

    Sizes apply to generated instances only (an instance file fixes them); ``--memory`` and
    ``--cells`` to memory theorems only; ``--samples`` not with ``--exhaustive``.

    ``option(name)`` is how the user wrote an option (``--hidden`` on the command line,
    ``hidden=`` in Python).

    Raises:
        InputError: the first flag that does not apply.
    """
    from .registry import theorem_spec

    spec = theorem_spec(args.id)
    typed = {option(name): getattr(args, name, None) for name in ("hidden", "vocab", "memory", "cells")}
    typed = {flag: v for flag, v in typed.items() if v is not None}
    if not spec.memory:
        for flag in (option("memory"), option("cells")):
            if flag in typed:
                raise InputError(f"{flag} does not apply to Theorem {spec.id} (a vanilla HMM has no memory); "
                                 "drop it, or use theorem 4.3, 4.6 or C.6")
    if getattr(args, "hmm", None) and typed:
        flag = next(iter(typed))
        given = "--hmm" if option("hmm") == "--hmm" else "a given instance"
        raise InputError(f"{flag} does not apply with {given}: the instance fixes the sizes; drop {flag}")
    if spec.memory and getattr(args, "ray", None):
        raise InputError(f"{option('ray')} does not apply to Theorem {spec.id}: it splits the vanilla large-model "
                         "checks (3.3, 3.6 above 1,000 states or tokens); drop it")
    if getattr(args, "exhaustive", False) and getattr(args, "samples", None) is not None:
        raise InputError(f"{option('samples')} does not apply with {option('exhaustive')} (every sequence of "
                         "length 1..T is checked); drop one of them")
    seed = getattr(args, "seed", 0)
    if seed is not None and seed < 0:
        raise InputError(f"{option('seed')} {seed}: expected a nonnegative integer")
    for name, value in defaults.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)


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
