"""Train/test trajectory datasets: generation, atomic writing, caching and checked loading.

A dataset is a directory `<root>/<pde>_<cache key>/` holding

    metadata.json   what was simulated (see `dataset_metadata`), plus `files` (the size and
                    sha256 of each split file) and `command` (what wrote it); written last
    train.npz       `data`: (n_train, n_frames + 1, C, m[, m]) coarse fields; `times`: (n_frames + 1,)
    test.npz        the same for the test trajectories

The cache key is a hash of the metadata (without `files` and `command`), so an identical
request finds its directory and is not recomputed. The directory is built under a
temporary name and renamed into place only when every file is written: a crash or a
blow-up never leaves a directory that looks finished. `load_dataset` refuses a dataset
whose metadata differs from what the caller expects and names the differing field.

Corrupt caches (a truncated or overwritten split, a broken metadata.json) are never used:
`load_dataset` checks each split's size and sha256 against metadata.json before reading
it (datasets written before the checksums existed are checked by reading every array in
full, which verifies the zip CRCs) and raises `CorruptDatasetError`, one line naming the
file, the problem and the command that rebuilds it. `generate_dataset` (what the tool and
the experiments call) rebuilds a corrupt cache by itself: nothing the user had is lost,
because the data are a pure function of the metadata and the corrupt folder is moved
aside to `<name>.corrupt-<UTC time>`, never deleted; so rerunning the command heals it.

Long generations run in shards (`generate_dataset(..., shard_size=k)`): trajectories
`[a, b)` of a split are simulated as one batch and written atomically to
`<dataset dir>.partial/<split>_<a>_<b>.npz`; a rerun skips the shards it finds intact
(a corrupt one is moved aside to `<file>.corrupt-<UTC time>` and simulated again), and the
dataset folder is assembled, checked and renamed into place only when every shard exists.
Several processes may run the same command at once (one per core): each claims a shard
before simulating it (`<shard>.claim`, created exclusively, holding `host pid`), skips the
shards others hold, then waits for them; the first to find every shard assembles the folder.
Trajectory i of split s starts from `fold_in(fold_in(key(seed), s), i)`, so the data do
not depend on the sharding (`generate_shards` gives the bit-for-bit condition).
"""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import socket
import sys
import tempfile
import time
import zipfile
import zlib
from typing import Any, Callable, Mapping

import jax
import numpy as np
from absl import logging
from jax.sharding import Mesh

from lib.common import workdir
from lib.common.progress import format_seconds
from lib.pde import checks, downsampling, systems, trajectory
from lib.toolbox import jsonl

FORMAT_VERSION = 1
METADATA = "metadata.json"
SPLITS = ("train", "test")
# Written into metadata.json beside the metadata, but not part of it (not hashed, not compared).
FILES, COMMAND = "files", "command"
PARTIAL = ".partial"   # suffix of the folder of finished shards of a dataset being generated


class CorruptDatasetError(ValueError):
    """A cached dataset file is damaged or foreign; the message names the file and the fix."""


@dataclasses.dataclass(frozen=True)
class DatasetSpec:
    """What to simulate (the fields of `config.data` plus the system and its parameters).

    warmup_time: simulated time discarded before the first saved frame.
    duration: simulated time covered by the saved frames.
    save_every: temporal downsampling, solver steps per saved frame.
    space_factor: spatial downsampling factor, fine grid n -> coarse grid n / space_factor.
    downsample: "spectral" (Fourier truncation) or "cell_average".
    seed: trajectory i of split s starts from `fold_in(fold_in(key(seed), s), i)`.
    chunk_frames: frames per compiled chunk (progress and blow-up checks run between
      chunks); it does not change the data and is not part of the metadata.
    """

    pde: str
    params: Mapping[str, Any]
    warmup_time: float
    duration: float
    save_every: int
    space_factor: int
    downsample: str
    n_train: int
    n_test: int
    seed: int
    dtype: str = "float32"
    chunk_frames: int = 50


def dataset_metadata(spec: DatasetSpec) -> dict[str, Any]:
    """The metadata of `spec`'s dataset; validates everything (ValueError) without computing."""
    solver = systems.build(spec.pde, spec.params, spec.dtype)
    n = spec.params["n"]
    checks.check_divisible(n, spec.space_factor)
    if spec.downsample not in downsampling.DOWNSAMPLERS:
        raise ValueError(
            f"unknown downsampling method {spec.downsample!r}; allowed: {sorted(downsampling.DOWNSAMPLERS)}"
        )
    checks.check_positive("save_every", spec.save_every)
    checks.check_positive("chunk_frames", spec.chunk_frames)
    checks.check_nonnegative("warmup_time", spec.warmup_time)
    for name in ("n_train", "n_test"):
        checks.check_positive(name, getattr(spec, name))
    frame_dt = solver.dt * spec.save_every
    n_frames = int(round(spec.duration / frame_dt))
    if n_frames < 1:
        raise ValueError(
            f"duration = {spec.duration:g} is shorter than one saved frame interval {frame_dt:g}"
        )
    return {
        "format_version": FORMAT_VERSION,
        "pde": spec.pde,
        "params": dict(spec.params),
        "dtype": spec.dtype,
        "dt": solver.dt,
        "length": solver.length,
        "fields": list(solver.saved_fields),
        "fine_grid": n,
        "coarse_grid": n // spec.space_factor,
        "space_factor": spec.space_factor,
        "downsample": spec.downsample,
        "save_every": spec.save_every,
        "frame_dt": frame_dt,
        "warmup_steps": int(round(spec.warmup_time / solver.dt)),
        "n_frames": n_frames + 1,
        "n_train": spec.n_train,
        "n_test": spec.n_test,
        "seed": spec.seed,
    }


def cache_key(metadata: Mapping[str, Any]) -> str:
    """A 16-hex-digit hash of the metadata (canonical JSON)."""
    text = json.dumps(metadata, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def dataset_path(root: str, metadata: Mapping[str, Any]) -> str:
    """Where the dataset with this metadata lives under `root`."""
    return os.path.join(root, f"{metadata['pde']}_{cache_key(metadata)}")


def initial_keys(seed: int, split: str, count: int) -> jax.Array:
    """The PRNG keys of the `count` trajectories of `split`."""
    base = jax.random.fold_in(jax.random.key(seed), SPLITS.index(split))
    return jax.vmap(lambda i: jax.random.fold_in(base, i))(np.arange(count))


def simulate_coarse(
    solver: systems.Solver,
    keys: jax.Array,
    metadata: Mapping[str, Any],
    chunk_frames: int = 50,
    mesh: Mesh | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Simulate one trajectory per key and return the downsampled frames.

    Runs `warmup_steps`, then `n_frames − 1` intervals of `save_every` steps, in compiled
    chunks; after each chunk a non-finite state raises `trajectory.BlowUpError` naming the
    sample, step and field. `progress(steps_done, total_steps)` is called after each chunk.

    Returns:
      float array `(len(keys), n_frames, C, m[, m])`, frame 0 being the state after warm-up.
    """
    factor, method, ndim = metadata["space_factor"], metadata["downsample"], solver.ndim
    save_every, warmup = metadata["save_every"], metadata["warmup_steps"]
    n_intervals = metadata["n_frames"] - 1

    def observe(state: jax.Array) -> jax.Array:
        return downsampling.downsample(solver.observe(state), factor, method, ndim)

    count = keys.shape[0]
    if mesh is not None:  # pad the batch to a multiple of the data axis; padding is dropped
        pad = -count % mesh.shape["data"]
        keys = jax.numpy.concatenate([keys, keys[:pad]]) if pad else keys
    states = jax.jit(jax.vmap(solver.initial_state))(keys)
    observe_batch = jax.jit(jax.vmap(observe))
    frames: list[np.ndarray] = []
    total, done = warmup + n_intervals * save_every, 0
    simulators: dict[tuple[int, int, bool], Callable] = {}

    def advance(n_steps: int, every: int, keep: bool) -> None:
        nonlocal states, done
        key = (n_steps, every, keep)
        if key not in simulators:
            simulators[key] = trajectory.make_batch_simulator(
                solver.step, n_steps, every, observe if keep else (lambda s: s[:0]), mesh  # s[:0]: no frames
            )
        run = simulators[key](states)
        trajectory.raise_on_blowup(run, solver.state_fields, step_offset=done, dt=solver.dt)
        states, done = run.final_state, done + n_steps
        if keep:
            frames.append(np.asarray(run.frames))
        if progress is not None:
            progress(done, total)

    chunk_steps = chunk_frames * save_every
    for start in range(0, warmup, chunk_steps):
        advance(min(chunk_steps, warmup - start), min(chunk_steps, warmup - start), keep=False)
    frames.append(np.asarray(observe_batch(states))[:, None])
    for start in range(0, n_intervals, chunk_frames):
        advance(min(chunk_frames, n_intervals - start) * save_every, save_every, keep=True)
    return np.concatenate(frames, axis=1)[:count]


def _sha256(file: str) -> str:
    digest = hashlib.sha256()
    with open(file, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_split(directory: str, split: str, data: np.ndarray, metadata: Mapping[str, Any]) -> dict:
    """Write `<split>.npz`; returns its `{"bytes", "sha256"}` for metadata.json."""
    times = metadata["warmup_steps"] * metadata["dt"] + metadata["frame_dt"] * np.arange(data.shape[1])
    file = os.path.join(directory, f"{split}.npz")
    with open(file, "wb") as f:
        np.savez(f, data=data, times=times)
    return {"bytes": os.path.getsize(file), "sha256": _sha256(file)}


def rebuild_command(root: str, pde: str) -> str:
    """The tool command that (re)builds a `pde` dataset under `root` (variant left to fill in)."""
    return (f"python tools/make_pde_data.py --config=configs/pde_data/{pde}.py:<variant> "
            f"--workdir={shlex.quote(root)}")


def _current_command() -> str:
    return shlex.join(["python", *sys.argv]) if sys.argv and sys.argv[0] else ""


def _corrupt(file: str, problem: str, path: str, command: str | None) -> CorruptDatasetError:
    """The one-line error for a damaged cache file, with how to rebuild it."""
    root, name = os.path.split(os.path.abspath(path))
    pde = name.rsplit("_", 1)[0]
    how = (f"rerun `{command}`" if command else f"rerun the command that wrote it, e.g. "
           f"`{rebuild_command(root, pde)}`")
    return CorruptDatasetError(
        f"{file}: {problem}; this dataset cache is corrupt and is not used. To rebuild it, "
        f"{how}: the corrupt folder is moved aside to {name}.corrupt-<time> and regenerated "
        f"(or delete {path} first)")


def move_aside(path: str) -> str:
    """Rename the folder (or file) `path` to `<path>.corrupt-<UTC time>` (never delete);
    returns the new name."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target, k = f"{path}.corrupt-{stamp}", 1
    while os.path.exists(target):
        target, k = f"{path}.corrupt-{stamp}-{k}", k + 1
    os.rename(path, target)
    return target


def generate_dataset(
    spec: DatasetSpec,
    root: str,
    mesh: Mesh | None = None,
    progress: Callable[[int, int], None] | None = None,
    command: str | None = None,
    shard_size: int | None = None,
    log: Callable[[str], None] = logging.info,
) -> tuple[str, bool]:
    """Write the dataset of `spec` under `root`, or find it there already.

    Returns `(path, cached)`: `cached` is True when an identical, intact dataset existed
    and nothing was computed. A cached folder that fails `check_dataset` (a corrupt file,
    or metadata that is not the one its name hashes) is moved aside to
    `<path>.corrupt-<UTC time>` (logged) and rebuilt. Without `shard_size` (and no
    `<path>.partial` folder left by a sharded run), train and test trajectories are
    simulated as one batch and `progress(steps_done, total_steps)` reports advancement.
    With `shard_size` (or such a folder), see `generate_shards`: `log` receives one
    progress line per shard and `progress` is not called.
    `command` (default: this process's command line) is recorded in metadata.json for the
    rebuild hint of a later corruption error.
    On any error (including a blow-up) the temporary directory is removed.
    """
    metadata = dataset_metadata(spec)
    if shard_size is not None:
        checks.check_positive("shard_size", shard_size)
    path = dataset_path(root, metadata)
    if os.path.exists(path):
        try:
            check_dataset(path, metadata)
            if os.path.isdir(path + PARTIAL):   # a sharded run stopped after the rename
                _remove_partial(path + PARTIAL)
            return path, True
        except ValueError as err:  # corrupt, or metadata that is not the one its name hashes
            aside = move_aside(path)
            logging.warning("%s; moved the folder aside to %s and rebuilding it", err, aside)
    os.makedirs(root, exist_ok=True)
    if shard_size is not None or os.path.isdir(path + PARTIAL):
        data = generate_shards(spec, metadata, path + PARTIAL, shard_size, mesh, log)
        if data is None:               # another process running the same command assembled it
            check_dataset(path, metadata)
            return path, True
    else:
        solver = systems.build(spec.pde, spec.params, spec.dtype)
        keys = jax.numpy.concatenate(
            [initial_keys(spec.seed, split, metadata[f"n_{split}"]) for split in SPLITS]
        )
        both = simulate_coarse(solver, keys, metadata, spec.chunk_frames, mesh, progress)
        data = {"train": both[: spec.n_train], "test": both[spec.n_train:]}
    tmp = tempfile.mkdtemp(dir=root, prefix=f".{os.path.basename(path)}.tmp-")
    try:
        files = {f"{split}.npz": _write_split(tmp, split, data[split], metadata) for split in SPLITS}
        record = {**metadata, FILES: files,
                  COMMAND: _current_command() if command is None else command}
        with open(os.path.join(tmp, METADATA), "w") as f:
            json.dump(record, f, indent=2, sort_keys=True)
        check_dataset(tmp, metadata)
        try:
            os.rename(tmp, path)
            cached = False
        except OSError:            # another process running the same command renamed first
            if not os.path.isdir(path):
                raise
            check_dataset(path, metadata)
            shutil.rmtree(tmp, ignore_errors=True)
            cached = True
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if os.path.isdir(path + PARTIAL):
        _remove_partial(path + PARTIAL)
    return path, cached


_SHARD_NAME = re.compile(r"(train|test)_(\d+)_(\d+)\.npz")
_SHARD_TMP = re.compile(r"\.tmp_.*\.npz")   # a shard write cut short (workdir.write_bytes_atomic)


def plan_shards(n: int, shard_size: int | None, found) -> list[tuple[int, int]]:
    """Ranges `[a, b)` that cover `range(n)` in order: a found range (an iterable of
    `(a, b)`) wherever one starts (the longest if several), else a new range of up to
    `shard_size` trajectories (None: no limit) that stops where the next found one starts."""
    found = sorted({(a, b) for a, b in found if 0 <= a < b <= n})
    out: list[tuple[int, int]] = []
    a = 0
    while a < n:
        here = [b for start, b in found if start == a]
        if here:
            b = max(here)
        else:
            b = min([n] + [start for start, _ in found if start > a]
                    + ([a + shard_size] if shard_size else []))
        out.append((a, b))
        a = b
    return out


def shard_progress_line(name: str, shard: str, done: int, total: int, found: int,
                        seconds_per_trajectory: float, eta_s: float) -> str:
    """The line logged after each written shard."""
    return (f"{name}: shard {shard} written; {done}/{total} shards done ({found} found on "
            f"disk), {seconds_per_trajectory:.1f} s per trajectory, ETA {format_seconds(eta_s)}")


def _write_shard(file: str, data: np.ndarray, tag: str) -> None:
    """Write `data` and its `tag` to `file` atomically (`workdir.write_bytes_atomic`)."""
    buffer = io.BytesIO()
    np.savez(buffer, data=data, shard=np.array(tag))
    workdir.write_bytes_atomic(file, buffer.getvalue())


def _read_shard(file: str, tag: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The `data` of a shard file; ValueError naming the problem unless it reads in full
    (zip CRCs), carries `tag` and holds finite `dtype` values of `shape`."""
    with open(file, "rb") as f:
        magic = f.read(4)
    if magic != b"PK\x03\x04":
        raise ValueError(f"not an .npz (zip) file (starts with {magic!r})")
    try:
        with np.load(file) as f:
            found, data = str(f["shard"]), f["data"]
    except _READ_ERRORS as err:
        raise ValueError(f"unreadable ({type(err).__name__}: {err})") from None
    if found != tag:
        raise ValueError(f"holds shard {found!r}, expected {tag!r}")
    if data.shape != shape or data.dtype != dtype:
        raise ValueError(f"holds {data.dtype} {data.shape}, expected {dtype} {shape}")
    if not np.isfinite(data).all():
        raise ValueError("holds NaN/Inf values")
    return data


def generate_shards(
    spec: DatasetSpec,
    metadata: Mapping[str, Any],
    partial: str,
    shard_size: int | None,
    mesh: Mesh | None = None,
    log: Callable[[str], None] = logging.info,
) -> dict[str, np.ndarray] | None:
    """Simulate the dataset shard by shard into the folder `partial`, resuming; returns
    `{"train": (n_train, n_frames, C, m[, m]), "test": ...}` read back from the shards.

    Each split is cut by `plan_shards` (shards found in `partial` are kept, whatever
    `shard_size` wrote them); shard `[a, b)` of `split` is one batch, written atomically
    to `<partial>/<split>_<a>_<b>.npz`. Found shards are checked first (`_read_shard`); a
    corrupt or foreign one is moved aside to `<file>.corrupt-<UTC time>` (logged) and
    simulated again. After each new shard, `log` gets `shard_progress_line` (shards on disk
    of all, the wall seconds per trajectory of this process, the ETA of the rest at that
    rate over this and the processes holding claims).

    Shards are claimed first (`_claim`): one held by another live process is skipped and,
    once this process has nothing left to claim, waited for (polling every `CLAIM_POLL_S`;
    a claim whose process has exited is taken over). Returns None when another process
    assembled the dataset folder meanwhile.

    A batch of odd size is padded with a copy of its last key (the copy is dropped): XLA
    on CPU computes a batch of one, and for some solvers the unpaired last member of an
    odd batch, differently to rounding, which chaos amplifies. So on one device the data
    equal the one-batch generation's bit for bit for Navier–Stokes, KdV and Gray–Scott
    (tested), and for Burgers when `n_train + n_test` is even.
    """
    solver = systems.build(spec.pde, spec.params, spec.dtype)
    os.makedirs(partial, exist_ok=True)
    name = os.path.basename(partial)[: -len(PARTIAL)]
    frame_shape = (metadata["n_frames"], len(metadata["fields"])) + (metadata["coarse_grid"],) * solver.ndim
    dtype = np.dtype(metadata["dtype"])

    def read(split: str, a: int, b: int) -> np.ndarray:
        return _read_shard(os.path.join(partial, f"{split}_{a}_{b}.npz"), f"{name}/{split}_{a}_{b}",
                           (b - a, *frame_shape), dtype)

    found: dict[str, set[tuple[int, int]]] = {split: set() for split in SPLITS}
    for entry in sorted(os.listdir(partial)):
        match = _SHARD_NAME.fullmatch(entry)
        if not match:
            continue
        split, a, b = match[1], int(match[2]), int(match[3])
        try:
            if not 0 <= a < b <= metadata[f"n_{split}"]:
                raise ValueError(f"range [{a}, {b}) is not within the {metadata[f'n_{split}']} "
                                 f"{split} trajectories")
            read(split, a, b)
            found[split].add((a, b))
        except ValueError as err:
            aside = move_aside(os.path.join(partial, entry))
            logging.warning("%s: %s; moved aside to %s and simulating it again",
                            os.path.join(partial, entry), err, aside)
    plan = [(split, a, b) for split in SPLITS
            for a, b in plan_shards(metadata[f"n_{split}"], shard_size, found[split])]
    todo = [(split, a, b) for split, a, b in plan if (a, b) not in found[split]]
    n_found = len(plan) - len(todo)
    if n_found:
        log(f"{name}: resuming, {n_found}/{len(plan)} shards found in {partial}")
    shard_file = lambda split, a, b: os.path.join(partial, f"{split}_{a}_{b}.npz")
    simulated, start, waiting_for = 0, time.monotonic(), None
    while todo:
        if os.path.isdir(partial[: -len(PARTIAL)]):
            return None                # another process has assembled the dataset
        for split, a, b in list(todo):
            file = shard_file(split, a, b)
            if os.path.exists(file) or not _claim(file + CLAIM, log):
                continue
            try:
                if not os.path.exists(file):   # not written by another process meanwhile
                    keys = initial_keys(spec.seed, split, metadata[f"n_{split}"])[a:b]
                    if (b - a) % 2:
                        keys = jax.numpy.concatenate([keys, keys[-1:]])
                    data = simulate_coarse(solver, keys, metadata, spec.chunk_frames, mesh)[: b - a]
                    _write_shard(file, data, f"{name}/{split}_{a}_{b}")
                    simulated += b - a
            finally:
                _remove_if_present(file + CLAIM)
            todo.remove((split, a, b))
            if simulated and os.path.exists(file):
                missing = [t for t in plan if not os.path.exists(shard_file(*t))]
                left = sum(hi - lo for _, lo, hi in missing)
                per = (time.monotonic() - start) / simulated
                log(shard_progress_line(name, f"{split}_{a}_{b}", len(plan) - len(missing), len(plan), n_found,
                                        per, per * left / (1 + len(_claims(partial, log)))))
        todo = [t for t in todo if not os.path.exists(shard_file(*t))]
        if todo:                       # the rest is held by other live processes
            holders = sorted(set(_claims(partial, log).values()))
            if holders != waiting_for:
                log(f"{name}: waiting for {len(todo)} shard(s) claimed by {', '.join(holders) or '-'}")
                waiting_for = holders
            time.sleep(CLAIM_POLL_S)
    try:
        return {split: np.concatenate([read(s, a, b) for s, a, b in plan if s == split])
                for split in SPLITS}
    except FileNotFoundError:
        if os.path.isdir(partial[: -len(PARTIAL)]):
            return None                # assembled (and the shards removed) by another process
        raise


CLAIM = ".claim"        # suffix of a shard's claim file: `host pid` of the process simulating it
CLAIM_POLL_S = 10.0     # how often a process that waits for others' shards looks again
_EMPTY_CLAIM_S = 60.0   # an empty claim older than this was left by a process killed while writing it


def _remove_if_present(file: str) -> None:
    try:
        os.remove(file)
    except FileNotFoundError:
        pass


def _holder(claim: str, log: Callable[[str], None] = logging.info) -> str | None:
    """`host:pid` of the live process that holds `claim`, or None when none does: no such
    file, or one left by a process of this host that has exited (removed, logged). A claim
    from another host is taken as live (its pid cannot be checked here)."""
    try:
        with open(claim) as f:
            text = f.read().split()
        age = time.time() - os.path.getmtime(claim)
    except FileNotFoundError:
        return None
    if len(text) != 2:                 # being written; or empty for good if its writer died
        if age < _EMPTY_CLAIM_S:
            return "a starting process"
        host, pid = socket.gethostname(), "?"
    else:
        host, pid = text
    if host == socket.gethostname():
        try:
            os.kill(int(pid), 0)
        except (ProcessLookupError, ValueError):
            log(f"{claim}: left by process {pid}, which has exited; taking the shard over")
            _remove_if_present(claim)
            return None
        except PermissionError:        # alive, another user's
            pass
    return f"{host}:{pid}"


def _claim(claim: str, log: Callable[[str], None] = logging.info) -> bool:
    """Create `claim` for this process (exclusively); False when a live process holds it."""
    while True:
        try:
            fd = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileNotFoundError:      # the folder is gone: another process assembled the data
            return False
        except FileExistsError:
            if _holder(claim, log) is not None:
                return False
            continue                   # a stale claim was removed: try again
        with os.fdopen(fd, "w") as f:
            f.write(f"{socket.gethostname()} {os.getpid()}")
        return True


def _claims(partial: str, log: Callable[[str], None] = logging.info) -> dict[str, str]:
    """`{claim file name: holder}` of the live claims in `partial` other than this process's."""
    mine = f"{socket.gethostname()}:{os.getpid()}"
    out = {}
    try:
        entries = os.listdir(partial)
    except FileNotFoundError:          # removed by the process that assembled the dataset
        return out
    for entry in entries:
        if entry.endswith(CLAIM):
            holder = _holder(os.path.join(partial, entry), log)
            if holder not in (None, mine):
                out[entry] = holder
    return out


def _remove_partial(partial: str) -> None:
    """Delete the shard files (and interrupted writes of them) in `partial`, then the
    folder; files moved aside as corrupt are kept, and so is the folder that holds them."""
    for entry in os.listdir(partial):
        if _SHARD_NAME.fullmatch(entry) or _SHARD_TMP.fullmatch(entry) or entry.endswith(CLAIM):
            _remove_if_present(os.path.join(partial, entry))
    kept = os.listdir(partial)
    if kept:
        logging.info("kept %s: it holds %d file(s) moved aside as corrupt", partial, len(kept))
    else:
        try:
            os.rmdir(partial)
        except FileNotFoundError:     # removed by another process at the same time
            pass


def _first_difference(found: Any, expected: Any, prefix: str = "") -> str | None:
    if isinstance(found, Mapping) and isinstance(expected, Mapping):
        for key in sorted(set(found) | set(expected)):
            name = f"{prefix}{key}"
            if key not in found or key not in expected:
                return name
            diff = _first_difference(found[key], expected[key], name + ".")
            if diff is not None:
                return diff
        return None
    return None if found == expected else prefix.rstrip(".")


def _read_record(path: str) -> dict[str, Any]:
    """metadata.json of the dataset folder `path` as stored (metadata, files, command)."""
    file = os.path.join(path, METADATA)
    if not os.path.isdir(path):
        raise ValueError(f"{path!r} is not a finished dataset (no {METADATA})")
    if not os.path.isfile(file):
        raise _corrupt(file, "missing (the folder exists but holds no finished dataset)", path, None)
    try:
        return jsonl.read_json(file, error=CorruptDatasetError, expect=dict)
    except CorruptDatasetError as err:   # "<file>[:line:col]: problem"
        loc, _, problem = str(err)[len(file):].partition(": ")
        raise _corrupt(file + loc, problem, path, None) from None


def load_metadata(path: str, expected: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata of the finished dataset at `path`, checked against `expected`.

    Raises ValueError when `path` holds no finished dataset or when a field differs
    (the message names the first differing field and both values), and
    `CorruptDatasetError` when metadata.json is missing from the folder or unreadable.
    The stored `files` and `command` entries are not part of the returned metadata.
    """
    found = _read_record(path)
    found = {k: v for k, v in found.items() if k not in (FILES, COMMAND)}
    expected = json.loads(json.dumps(expected))  # tuples -> lists, as stored
    field = _first_difference(found, expected)
    if field is not None:
        get = lambda d: _lookup(d, field)
        raise ValueError(
            f"dataset at {path!r} does not match: metadata field '{field}' is {get(found)!r}, "
            f"expected {get(expected)!r}"
        )
    return found


def _lookup(metadata: Mapping[str, Any], field: str) -> Any:
    node: Any = metadata
    for part in field.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return "<missing>"
        node = node[part]
    return node


_READ_ERRORS = (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError, KeyError)


def _read_split(path: str, split: str, metadata: Mapping[str, Any], files: Mapping | None,
                command: str | None) -> dict[str, np.ndarray]:
    """`{"data", "times"}` of `<split>.npz`, after checking its size and sha256 (when
    recorded), that it reads in full (zip CRCs) and that its shapes match the metadata."""
    file = os.path.join(path, f"{split}.npz")
    if not os.path.isfile(file):
        raise _corrupt(file, "missing", path, command)
    if files is not None:
        want = files.get(f"{split}.npz") if isinstance(files, Mapping) else None
        if not isinstance(want, Mapping) or not {"bytes", "sha256"} <= set(want):
            raise _corrupt(file, f"no checksum recorded for it in {METADATA}", path, command)
        size = os.path.getsize(file)
        if size != want["bytes"]:
            raise _corrupt(file, f"{size} bytes, {METADATA} records {want['bytes']} (truncated or "
                           "overwritten)", path, command)
        if _sha256(file) != want["sha256"]:
            raise _corrupt(file, f"sha256 differs from the one recorded in {METADATA}", path, command)
    with open(file, "rb") as f:
        magic = f.read(4)
    if magic != b"PK\x03\x04":
        raise _corrupt(file, f"not an .npz (zip) file (starts with {magic!r})", path, command)
    try:
        with np.load(file) as f:
            out = {"data": f["data"], "times": f["times"]}
    except _READ_ERRORS as err:
        raise _corrupt(file, f"unreadable ({type(err).__name__}: {err})", path, command) from None
    n, frames = metadata[f"n_{split}"], metadata["n_frames"]
    lead = (n, frames, len(metadata["fields"]))
    if out["data"].shape[:3] != lead or out["times"].shape != (frames,):
        raise _corrupt(file, f"holds data {out['data'].shape} and times {out['times'].shape}, "
                       f"expected data ({n}, {frames}, {lead[2]}, ...) and times ({frames},)",
                       path, command)
    return out


def load_dataset(path: str, expected_metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Load a dataset written by `generate_dataset`, refusing one that does not match.

    Returns `{"metadata": dict, "train": {"data", "times"}, "test": {"data", "times"}}`
    with numpy arrays (`data`: `(n, n_frames, C, m[, m])`). Raises `CorruptDatasetError`
    (one line: the file, the problem, the rebuild command) for a damaged or foreign file.
    """
    record = _read_record(path)
    metadata = load_metadata(path, expected_metadata)
    command = record.get(COMMAND) or None
    out: dict[str, Any] = {"metadata": metadata}
    for split in SPLITS:
        out[split] = _read_split(path, split, metadata, record.get(FILES), command)
    return out


def check_dataset(path: str, expected_metadata: Mapping[str, Any]) -> None:
    """Raise `CorruptDatasetError` (or ValueError for other metadata) unless the dataset
    at `path` loads intact; the check `generate_dataset` runs on a cached folder."""
    load_dataset(path, expected_metadata)
