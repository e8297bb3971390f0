"""The cost model: what a check will cost, predicted from shapes before any work; the one module
that every path asks (``verify theorem`` and ``check()`` before they start, the exact fallback of
the certified kernels before each batch, report rows before exact margins, the large-model path).

What it predicts, from which shapes, in which units:

- :func:`exact_seconds` ``(sequences, length, states, memory=)``: seconds of the exact checks of
  ``sequences`` token sequences of ``length`` tokens each, on a chain of ``states`` states
  (``|H|`` for a vanilla HMM, the lifted ``|M|^N |S|`` for a memory-augmented one);
- :func:`float_seconds` (same shapes, and the model for a sparse ``A``): seconds of the float
  kernels of certified and float mode;
- :func:`work_estimates` ``(model, sequences, length, exhaustive=)``: ``(exact, certified/float)``
  seconds of a whole ``verify theorem`` run, fixed work included;
- :func:`message_bits` ``(model, length)``: bits of the largest integer of an exact backward
  message after ``length`` steps (measured on a prefix of the model, extrapolated);
- :func:`exact_bytes` ``(sequences, length, states, bits)``: bytes of the exact messages held;
- the large-model path (Theorems 3.3 and 3.6 above 1,000 states or tokens, a sparse ``A``):
  :func:`large_estimate` ``(hidden, vocab, nnz_A, nnz_W, sequences, length, ...)``, the seconds
  (whole run, and the model with its assumptions alone) and peak bytes of a run, and
  :func:`large_exact_seconds` ``(sequences, length, nnz_A, states)``, the seconds of exact
  backward passes over a sparse ``A``.

Seconds are wall-clock on the reference machine the rates were calibrated on (2 idle cores,
2026-11-25; ``benchmarks/estimates.py`` compares estimate and measurement); the rates of the
two paths as wholes (the large path, and the dense path priced against it) are CPU seconds of
whole runs forced on each path (``benchmarks/results/boundary/calibration/``, 2026-11-28), the
wall time of an idle machine; bytes are bytes of Python integers; bits are bits of one integer.

What it decides (each refusal a :class:`~headprompt.models.exceptions.LimitError` naming the
sizes, the estimate, the limit and the way forward):

- :func:`check_work` ``(args, model) -> (mode, note)``: the arithmetic mode of a run (exact, or
  certified when that is the faster proof; :data:`AUTO_EXACT_SECONDS`,
  :data:`AUTO_CERTIFIED_MAX_LENGTH`), or a refusal past :data:`MAX_SECONDS`,
  :data:`MAX_TOKENS`, :data:`MAX_FLOAT_ENTRIES` or :data:`MAX_EXACT_BYTES`;
- :func:`check_fallback`: the refusal of an exact fallback batch past the same limits (the
  large-model path refuses past :data:`MAX_SECONDS` and :data:`MAX_LARGE_BYTES` from
  :func:`large_estimate`);
- which path a ``verify theorem 3.3|3.6`` run takes (dense Fractions or the large path's sparse
  exact form) is :mod:`headprompt.verify.runtime.paths`: the choice, priced with the rates here
  (the rates of both paths live in this module and nowhere else).

Nothing here imports the rest of ``verify`` (the floor below the checks; docs/architecture.md).
"""

from __future__ import annotations

__all__ = ["exact_seconds", "float_seconds", "work_estimates", "message_bits", "exact_bytes", "check_work",
           "check_fallback", "MAX_SECONDS", "MAX_TOKENS", "MAX_FLOAT_ENTRIES", "MAX_EXACT_BYTES",
           "AUTO_EXACT_SECONDS", "AUTO_CERTIFIED_MAX_LENGTH", "large_estimate", "large_exact_seconds",
           "MAX_LARGE_BYTES", "stays_exact"]

# ---------------------------------------------------------------- work limits (SPEC section 2)

MAX_SECONDS = 600
"""What ``verify theorem`` accepts must finish: estimated seconds above this are refused."""

MAX_TOKENS = 20_000_000
"""Sampled sequences x length (the sampled pool is held in memory)."""

MAX_FLOAT_ENTRIES = 50_000_000
"""Float memory checks hold ``[sequences, length, lifted states]`` arrays (8 bytes each)."""

MAX_EXACT_BYTES = 4 * 2 ** 30
"""Exact checks keep the backward messages of every distinct suffix; their estimated size
(:func:`exact_bytes`) above this is refused (or, without ``--mode``, answered in certified mode)."""


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
    return _units_of(states, nnz)


def _units_of(states: int, nnz: int) -> float:
    """:func:`_float_units` from the shapes: ``nnz + |H|`` where the float kernel runs over the
    nonzeros of ``A``, else ``|H|^2``."""
    from ...models.inference.floats import SPARSE_MAX_DENSITY, SPARSE_MIN_STATES

    if states >= SPARSE_MIN_STATES and nnz <= SPARSE_MAX_DENSITY * states * states:
        return float(nnz + states)
    return float(states * states)


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


def stays_exact(states: int, tokens: int, sequences: int, length: int) -> bool:
    """Whether :func:`check_work` keeps a vanilla run without ``--mode`` in exact arithmetic
    (its exact estimate at most :data:`AUTO_EXACT_SECONDS`), from the shapes alone: the
    ``sequences`` sampled and adversarial ones, plus the ``|X|^2`` near-ties it counts."""
    base = _FIXED_SECONDS + _PER_STATE2 * states * states + _adversarial_seconds(tokens, states, length)
    return base + exact_seconds(sequences + tokens * tokens, length, states) <= AUTO_EXACT_SECONDS


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


# ---------------------------------------------------------------- the large-model path

MAX_LARGE_BYTES = 12 * 2 ** 30
"""Estimated peak memory above which a large-model run is refused."""

# seconds per unit of the large path. Its pieces were timed by profile on the boundary families
# (benchmarks/boundary.py, 60-2,100 states) and fitted to CPU seconds (user + system, which is the
# wall time of an idle machine: these runs are single-threaded) on this project's 2-core machine
# (2026-11-28); the sparse kernel's memory-bound rate comes from benchmarks/scale.py at 16,384
# states (set between CPU and wall seconds under load ~6, so within 2x of either)
_LARGE_FIXED = 0.8            # starting the process and importing the large path (1.14-1.17 s in all at 4 states)
_KERNEL_RATE = 3.6e-9         # per sequence, position and (nnz(A) + 2 |H|), messages beyond the cache
_KERNEL_CACHED_RATE = 4e-10   # ... a batch's messages within _KERNEL_CACHE_BYTES (blocked family, 900-2,100 states);
_KERNEL_CACHE_BYTES = 4 * 2 ** 20     # between the two sizes the rate goes linearly from one to the other
_KERNEL_MEMORY_BYTES = 64 * 2 ** 20   # (4,096 states: 5.7 s CPU measured, 4.2 s estimated)
_BUILD_RATE = 1.2e-6          # building and checking the model: per nonzero of A and W
_DENSE_RATE = 8.5e-11         # a dense A (GEMM kernel): per sequence, position and |H|^2 (dense family, whole runs
                              # at 200-2,100 states, split between kernel, pool and exact passes by a profile)
_POOL_RATE = 2.6e-10          # the pool of candidate sequences, scored in float over the nonzeros of A (whatever
                              # its density): per sequence, position and nnz(A) + 2 |H|
_DRAW_RATE = 2e-5             # ... and drawn: per sequence and position
_BLOCK_RATE = 1.5e-5          # Theorem 3.3, |H| <= |X|: blocks, ranks and the head over every column, per nnz(W)
_SOLVE_RATE = 3.6e-8          # ... with a dense W (one block of every column): the exact head, per |H|^3
                              # (1,100 states: 70 s, 1,500: 205 s, on an idle core)
_LARGE_EXACT_RATE = 1e-7      # one exact backward pass over a sparse A: per position and nnz(A) + |H| (the sparse
                              # family's exact ties: 2,000 of 10,200 sequences, 6.5 s CPU at 1,000 states)


def large_exact_seconds(sequences: int, length: int, nnz_A: int, states: int) -> float:
    """Seconds of exact (integer) backward passes over a sparse ``A`` with ``nnz_A`` nonzeros and
    ``states`` states, for ``sequences`` sequences of ``length`` tokens: the large path's exact
    fallback (sequences the certified bound cannot decide)."""
    return _LARGE_EXACT_RATE * sequences * length * (nnz_A + states)


def large_estimate(hidden: int, vocab: int, nnz_A: int, nnz_W: int, sequences: int, length: int, *,
                   dense_kernel: bool, exact_passes: int, pool: int, batch: int, all_columns: bool = False,
                   three_three: bool = False, read: bool = True) -> dict:
    """Estimated cost of a large-model run, decided from sizes alone: ``hidden`` states,
    ``vocab`` tokens, ``nnz_A`` and ``nnz_W`` nonzeros, ``sequences`` checked sequences of
    ``length`` tokens; ``dense_kernel``: ``A`` is multiplied as a dense matrix (one GEMM per
    step); ``exact_passes``: exact backward passes per position (cross-checks and the witness);
    ``pool``: the sequences sampled to choose adversarial ones; ``batch``: rows of a float batch;
    ``all_columns``: Theorem 3.3 with ``|H| <= |X|``, whose rank proof and head cover every
    column of ``W``; ``three_three``: Theorem 3.3 (else 3.6); ``read``: the model comes from a
    file (else from an in-memory HMM, converted entry by entry to the sparse exact form).

    Returns ``{"seconds", "assumption_seconds", "solve_seconds", "bytes"}``: the whole run, the
    model with its assumptions alone, the exact head's solve over a dense ``W`` (included in
    ``seconds``), and the peak bytes."""
    share = min(1.0, max(0.0, (8 * batch * hidden - _KERNEL_CACHE_BYTES) / (_KERNEL_MEMORY_BYTES - _KERNEL_CACHE_BYTES)))
    sparse_rate = _KERNEL_CACHED_RATE + share * (_KERNEL_RATE - _KERNEL_CACHED_RATE)
    kernel = (_DENSE_RATE * hidden * hidden if dense_kernel else sparse_rate * (nnz_A + 2 * hidden)) * sequences * length
    exact = _LARGE_EXACT_RATE * exact_passes * length * (nnz_A + nnz_W / max(vocab, 1) + hidden)
    before = _LARGE_FIXED + _BUILD_RATE * (nnz_A + nnz_W)  # reading the model and its assumptions
    if not read:                                            # an in-memory HMM: its sparse exact form built
        before += _CONVERT_RATE * hidden * (hidden + vocab)
    if all_columns:
        before += _BLOCK_RATE * nnz_W
    after = kernel + exact + pool * length * (_POOL_RATE * (nnz_A + 2 * hidden) + _DRAW_RATE)
    if nnz_W > 0.25 * hidden * vocab and (all_columns or not three_three):
        # a dense W is one block: the head's exact solve over W[:, H*] (every column for 3.3,
        # at most min(|H|, |X|) for 3.6) is cubic in its columns; an upper bound for 3.6
        solve = _SOLVE_RATE * min(hidden, vocab) ** 3
        after += solve
    else:
        solve = 0.0
    seconds = before + after
    model_bytes = 64 * (nnz_A + nnz_W) + 400 * hidden + (16 * hidden * hidden if dense_kernel else 0)
    batch_bytes = 8 * batch * hidden * 8 + 8 * (sequences + pool) * length * 2
    exact_bytes = 120 * nnz_W + 200 * hidden        # Python integers of W^T b and rows
    return {"seconds": round(seconds, 1), "assumption_seconds": round(before, 1), "solve_seconds": round(solve, 1),
            "bytes": int(model_bytes + batch_bytes + exact_bytes + 300 * 2 ** 20)}

# the dense path as a whole (verify.reports.vanilla), priced against the large path by
# verify.runtime.paths: fitted, like the large path's rates above, to CPU seconds of whole runs on the
# boundary families at 60-1,000 states (benchmarks/results/boundary/, 2026-11-28)
_DENSE_FIXED = 0.9            # starting the process, importing the dense path, the witness (1.4-1.7 s in all at
                              # 4 states, 2.2-2.4 s at 100 states)
_DENSE_SEQUENCE_RATE = 5e-5   # per sequence checked (sampled, adversarial, and the |X| + |X|^2 of length <= 2
                              # when |X|^2 <= 10,000): Python work around each verdict
_EXACT_SMALL_RATE = 1.8e-10   # a run kept exact (stays_exact): per sequence, position, (nnz(A) + |H|) x (nonzeros
                              # of a row of W) and bit of the common denominators the integers carry (boundary
                              # families at 11-30 states: 0.1-3 s)
_DENSE_READ_RATE = 4e-6       # reading a file's entries of A and W into Fractions and checking them, per entry
_DENSE_ENTRY_RATE = 8e-6      # ... then the integer form, W^+ and the head over W, per entry
_NEAR_TIE_RATE = 1.2e-8       # the exact near-tie search (at most 64 states), per multiply-add of its budget
                              # (1.2-2.5 s of extra CPU at 60 states, 1.2e8 multiply-adds)
_MARGIN_SEQUENCES = 230       # sequences whose margins are computed exactly (robustness block, cross-checks)
_BITS_STEP_RATE = 1.4e-10     # one exact backward step of those, per (nnz(A) + |H|) x |H|: the integers carry
                              # the common denominator of A's columns, whose bits grow with |H| where the columns
                              # sum to unrelated integers (dense family: 1.5 s at 200 states, 18 s at 400)
_STEP_RATE = 8e-8             # one exact backward step over the nonzeros of A, per nnz(A) + |H| (Python integers;
                              # both paths use models.inference.sparse.transpose_apply)
_FLINT_STEP_RATE = 6e-9       # ... over a dense A (fmpz_mat), per |H|^2
_CONVERT_RATE = 2e-6          # an in-memory HMM to the large path's sparse exact form, per entry of A and W
_DENSE_ENTRY_BYTES = 360      # Fractions of A, W, W^+ and the integer forms, per entry
