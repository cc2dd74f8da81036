"""Run options: how an evaluation runs, validated once for every caller (CLI, Python, explorers).

    >>> opts = RunOptions(engine="des", frames=50, noise_sigma=0.02, seed=3)
    >>> from hetsim.mapping import Pipeline, Placement
    >>> opts.resolve(Pipeline(())).buffer_frames          # defaults filled in for a pipeline
    1
    >>> RunOptions(source="poisson", interval_s=0.5).resolve(Placement({}))
    Traceback (most recent call last):
    hetsim.errors.HetsimError: ...

An option an engine or a mapping form would ignore is refused with one line rather than silently
dropped: ``--source poisson`` on a DAG placement, ``--buffer`` on a placement (whose frames in
flight are ``--in-flight``), ``--noise`` on the analytic engine. Only the options a caller set
explicitly are checked this way (pydantic's ``model_fields_set``), so defaults never trip it.
Messages name the command-line flag and the Python field.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hetsim import bounds as B
from hetsim.errors import HetsimError

#: Flag names of the fields, for messages (the CLI's spelling; the field name follows in brackets).
FLAGS = {
    "engine": "--engine", "frames": "--frames", "contention": "--no-contention",
    "source": "--source", "interval_s": "--interval", "buffer_frames": "--buffer",
    "in_flight": "--in-flight", "noise_sigma": "--noise", "seed": "--seed",
    "warmup_fraction": "warmup_fraction", "state": "--dvfs", "fast": "fast", "flows": "--flows",
    "force": "--force",
}

#: Where the frames of a pipeline come from (the vocabulary; :class:`hetsim.sim.source.FrameSource`
#: runs it): every frame waiting at t = 0, one every ``interval_s``, or Poisson arrivals of mean
#: ``interval_s``.
SourceKind = Literal["saturated", "periodic", "poisson"]
SOURCE_KINDS: tuple[str, ...] = ("saturated", "periodic", "poisson")


def check_source(kind: str, interval_s: float | None) -> str | None:
    """What is wrong with a frame source of ``kind`` and ``interval_s`` (None: nothing): the one
    rule :class:`RunOptions` and :class:`~hetsim.sim.source.FrameSource` both apply."""
    if kind not in SOURCE_KINDS:
        return f"frame source {kind!r}: allowed: {', '.join(SOURCE_KINDS)}"
    if kind == "saturated" and interval_s is not None:
        return "a saturated source has no interval"
    if kind != "saturated" and not (interval_s is not None and interval_s > 0):
        return f"a {kind} source needs a positive interval"
    return None


Frames = Annotated[int | None, B._number(B.FRAMES, "frames", integer=True, optional=True)]
QueueFrames = Annotated[int | None, B._number(B.QUEUE_FRAMES, "frames", integer=True, optional=True)]


class RunOptions(BaseModel):
    """Everything that says how one evaluation runs (not what runs where: that is the mapping).

    ``engine``: ``analytic`` (closed forms) or ``des`` (SimPy). ``frames``: frames streamed
    (default 100 for a pipeline, 1 for a placement). ``contention``: memories and links slow the
    flows that share them (des; analytic pipelines: the fluid limit of the busiest shared memory
    or link caps the throughput, :mod:`hetsim.contention`). ``source``/``interval_s``: frame arrivals of a pipeline
    (saturated, periodic, Poisson). ``buffer_frames``: frames each inter-stage queue of a pipeline
    holds (default 1). ``in_flight``: frames a placement may have inside the platform at once
    (default 1). ``noise_sigma``/``seed``: seeded multiplicative lognormal noise of mean 1 per
    piece of work (des). ``warmup_fraction``: frames left out of the steady state. ``state``: DVFS
    levels by cluster (or accelerator). ``fast``: let the DES answer a pipeline with nothing to
    contend for by its exact max-plus recurrence instead of SimPy (same numbers to 1e-12).
    ``force``: run even when the run's estimated work (:mod:`hetsim.sim.budget`: events of the
    DES, stage executions of the max-plus path and of the analytic schedule) is past the limit.
    ``flows``: how a pipeline stage's memory traffic contends in the DES: one flow per stage
    execution (``stage``, averaged over its ops) or one per op in turn (``op``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    engine: Literal["analytic", "des"] = "des"
    frames: Frames = None
    contention: bool = True
    source: SourceKind = "saturated"
    interval_s: Annotated[float | None, B._number(B.INTERVAL_S, "s", optional=True)] = None
    buffer_frames: QueueFrames = None
    in_flight: QueueFrames = None
    noise_sigma: Annotated[float, B._number(B.NOISE_SIGMA)] = 0.0
    seed: Annotated[int, B._number(B.SEED, integer=True)] = 0
    warmup_fraction: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)] = 0.1
    state: dict[str, str] | None = None
    fast: bool = True
    flows: Literal["stage", "op"] = "stage"
    force: bool = False

    @classmethod
    def make(cls, **values) -> RunOptions:
        """Build from keyword values, turning validation errors into one ``HetsimError`` line that
        names the flag, the value and what is allowed."""
        # Python callers pass ints for floats and numpy numbers: accept real numbers there.
        for key in ("interval_s", "noise_sigma", "warmup_fraction"):
            v = values.get(key)
            if v is not None and not isinstance(v, bool) and hasattr(v, "__float__"):
                values[key] = float(v)
        for key in ("frames", "buffer_frames", "in_flight", "seed"):
            v = values.get(key)
            if v is not None and not isinstance(v, bool) and hasattr(v, "__index__"):
                values[key] = int(v)
        try:
            return cls(**values)
        except ValidationError as e:
            err = e.errors()[0]
            field = str(err["loc"][0]) if err["loc"] else "options"
            flag = FLAGS.get(field, field)
            what = f"{flag} ({field})" if flag != field else field
            bounds = {"greater_than_equal": "at least {ge}", "greater_than": "greater than {gt}",
                      "less_than_equal": "at most {le}", "less_than": "less than {lt}"}
            if err["type"] in bounds:
                rule = bounds[err["type"]].format(**err.get("ctx", {}))
                raise HetsimError(f"{what} must be {rule} (got {err['input']!r})") from None
            if err["type"] == "value_error":   # hetsim.bounds' checks: "must be ... in [a, b]"
                msg = err["msg"].removeprefix("Value error, ")
                raise HetsimError(f"{what} {msg} (got {err['input']!r})") from None
            raise HetsimError(f"{what}: {err['input']!r} is not allowed: {err['msg'].lower()}") from None

    # -- per mapping form -------------------------------------------------------------------
    def resolve(self, mapping) -> RunOptions:
        """These options for ``mapping`` (a Pipeline or a Placement): refuse the options it or the
        engine would ignore, and fill in the defaults that depend on the form."""
        from hetsim.mapping import Pipeline

        given = self.model_fields_set
        pipeline = isinstance(mapping, Pipeline)

        def refuse(field: str, why: str) -> None:
            raise HetsimError(f"{FLAGS[field]} ({field}): {why}")

        if pipeline and "in_flight" in given:
            refuse("in_flight", "applies to DAG placements; a pipeline's queues hold --buffer frames")
        if not pipeline:
            if "buffer_frames" in given:
                refuse("buffer_frames", "applies to pipelines; a placement's frames in flight are "
                       "--in-flight (in_flight)")
            if self.source != "saturated" or "interval_s" in given:
                refuse("source" if self.source != "saturated" else "interval_s",
                       "frame arrivals apply to pipelines; a placement runs its frames back to back, "
                       "at most --in-flight at once")
        wrong = check_source(self.source, self.interval_s)   # interval_s > 0 is its type's range
        if wrong is not None and self.source == "saturated":
            refuse("interval_s", f"{wrong}; give --source periodic or poisson")
        if wrong is not None:
            refuse("source", f"{wrong}: give --interval (interval_s), the mean seconds between frames")
        if self.engine == "analytic":
            for field in ("noise_sigma", "warmup_fraction", "flows"):
                if field in given and getattr(self, field) != RunOptions.model_fields[field].default:
                    refuse(field, "needs --engine des (the analytic engine is closed-form: no noise, "
                           "no warm-up, no per-op flows)")
            if pipeline and self.source == "poisson":
                refuse("source", "a Poisson source needs --engine des (the analytic engine has no "
                       "random arrivals)")
        frames = self.frames if self.frames is not None else (100 if pipeline else 1)
        update = {"frames": frames}
        if pipeline:
            update["buffer_frames"] = self.buffer_frames or 1
        else:
            update["in_flight"] = self.in_flight or 1
        return self.model_copy(update=update)
