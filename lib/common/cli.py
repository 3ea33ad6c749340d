"""The shared command line of every experiment binary.

    python experiments/<name>/main.py --config=configs/<name>/<file>.py:<variant> \\
        [--config.some.key=value ...] [--workdir=DIR] [--restart] \\
        [--distributed --coordinator_address=HOST:PORT --num_processes=N --process_id=I]

`--config.a.b=v` overrides are taken out of argv before absl parses it and applied by
`lib.common.config.apply_overrides`, so a misspelled key or a wrong type is a
`ConfigError` that names the key (with a suggestion), not a traceback. The experiment's
`train_and_evaluate(config, workdir)` validates the config against its schema before any
compute. Every `ConfigError` (a bad config, a config file that fails to load, and the
`WorkdirError`s: a workdir of another config, in use by another process, or with progress
no checkpoint restores) is one line on stderr and exit status 2, and so is a run that
stopped on a NaN/Inf metric or diverged (`guards.Diverged`, naming the step and metric).
"""
from __future__ import annotations

import ast
import glob
import importlib
import json
import os
import sys
import textwrap
from typing import Callable, Sequence

from absl import app, flags, logging

from lib.common import config as config_lib
from lib.common import guards
from lib.common import paths
from lib.common import workdir as workdir_lib

FLAGS = flags.FLAGS


def _define_flags() -> None:
    if "config" in FLAGS:
        return
    flags.DEFINE_string("config", None, "Config file and variant, `path/to/file.py:variant`. "
                        "Override fields with --config.key.sub=value.", required=True)
    flags.DEFINE_string("workdir", None, "Run directory (config.json, metrics.jsonl, "
                        "checkpoints/, plots/, results.json). Rerunning the same command on it "
                        "resumes. Default: <repository>/workdirs/<experiment>_<config file>_"
                        "<variant>.")
    flags.DEFINE_bool("distributed", False, "Call jax.distributed.initialize (multi-host GPU "
                      "or TPU pod). On a TPU pod no other flag is needed.")
    flags.DEFINE_string("coordinator_address", None, "host:port of process 0 (non-TPU clusters).")
    flags.DEFINE_integer("num_processes", None, "Number of processes (non-TPU clusters).")
    flags.DEFINE_integer("process_id", None, "This process's index (non-TPU clusters).")
    flags.DEFINE_string("cpu_collectives", None, "CPU cross-process collectives, e.g. 'gloo' "
                        "(multi-process runs on CPU).")
    flags.DEFINE_bool("dry_run", False, "Print the resolved, validated config and the workdir, "
                      "then exit without any compute.")
    flags.DEFINE_bool("restart", False, "Where a workdir's progress cannot be restored "
                      "(unreadable checkpoints, or a best state or results with no checkpoint "
                      "left), move its checkpoints, best state, metrics.jsonl and results into "
                      "<workdir>/restarted_<UTC time>/ and train from step 0; without it such "
                      "a run refuses. Changes nothing in a workdir that resumes.")


def default_workdir(config_spec: str) -> str:
    """<repo>/workdirs/<experiment>_<config file>[_<variant>], whatever the current folder."""
    path, _, arg = config_spec.partition(":")
    name = os.path.splitext(os.path.basename(path))[0]
    experiment = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return paths.resolve(os.path.join("workdirs",
                                      f"{experiment}_{name}" + (f"_{arg}" if arg else "")))


HELP_ARGS = ("--help", "-h", "--helpshort", "-?", "--help=true")
WORKSPACE_FLAGS = ("config", "workdir", "dry_run", "restart", "distributed",
                   "coordinator_address", "num_processes", "process_id", "cpu_collectives")


def _config_files(main_path: str) -> list[str]:
    """The config files of the binary at `main_path` (configs/<experiment>/*.py)."""
    experiment = os.path.basename(os.path.dirname(os.path.abspath(main_path)))
    folder = os.path.join(paths.REPO_ROOT, "configs", experiment)
    return sorted(glob.glob(os.path.join(folder, "[!_]*.py")))


def file_variants(path: str) -> tuple[str, tuple[str, ...]]:
    """(module docstring, VARIANTS) of a config file, read without executing it."""
    tree = ast.parse(open(path).read(), path)
    variants: tuple[str, ...] = ()
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "VARIANTS"
                                                 for t in node.targets)):
            try:
                variants = tuple(ast.literal_eval(node.value))
            except ValueError:
                variants = ()
    return ast.get_docstring(tree) or "", variants


def help_text(main_path: str, doc: str | None) -> str:
    """`--help` of a binary: its docstring, its own flags (those defined in the file at
    `main_path`, which absl files under that path), the workspace flags, its configs and
    variants."""
    def line(flag) -> str:
        default = "" if flag.default in (None, False) else f" (default: {flag.default})"
        return textwrap.fill(f"--{flag.name}: {' '.join(flag.help.split())}{default}", 92,
                             initial_indent="  ", subsequent_indent="      ")

    lines = [(doc or "").strip()]
    own = [f for f in FLAGS.flags_by_module_dict().get(main_path, []) if f.name not in WORKSPACE_FLAGS]
    if own:
        lines += ["", f"Flags of {os.path.basename(main_path)}:"] + [line(f) for f in own]
    lines += ["", "Flags (lib/common/cli.py; --helpfull lists absl's too):"]
    lines += [line(FLAGS[name]) for name in WORKSPACE_FLAGS]
    lines.append("  --config.KEY=VALUE: override one config value (a misspelled key is named "
                 "with a suggestion).")
    lines += ["", textwrap.fill(
        "Paths: --config and --workdir as given are relative to the current folder; the "
        "default workdir and the configs' default data folders (data/...) are under the "
        f"repository root ({paths.REPO_ROOT}).", 92)]
    files = _config_files(main_path)
    if files:
        lines += ["", "Configs and their variants (--config=FILE:VARIANT):"]
        for path in files:
            docstring, variants = file_variants(path)
            rel = os.path.relpath(path, paths.REPO_ROOT)
            lines.append(f"  {rel}: {', '.join(variants) or '(no VARIANTS)'}")
            lines += [f"      {line}" for line in docstring.splitlines() if line.strip()]
    return "\n".join(lines)


def dry_run_text(spec: str, config, workdir: str) -> str:
    """The resolved config (validated by its file's `validate`) and where it would run."""
    module = config_lib._module_of(spec.partition(":")[0])
    if hasattr(module, "validate"):
        module.validate(config)
    return (f"# {spec}: valid; would run in {workdir}\n"
            + json.dumps(config_lib.to_json_dict(config), indent=2, sort_keys=True))


def _callable(target: Callable | str) -> Callable:
    """`target`, or the function named by "package.module:function" (imported now)."""
    if callable(target):
        return target
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name or "train_and_evaluate")


def resolve_config(spec: str, overrides: Sequence[tuple[str, str | None]]):
    """Load `spec` and apply the command-line overrides (`ConfigError` on a bad one)."""
    config = config_lib.load_config(spec)
    parsed = {}
    for key, value in overrides:
        if value is None:
            raise config_lib.ConfigError(f"override --config.{key} needs a value (--config.{key}=...)")
        parsed[key] = config_lib.parse_value(value)
    return config_lib.apply_overrides(config, parsed)


def run_tool(main: Callable, argv: Sequence[str] | None = None) -> None:
    """`absl.app.run(main)` for a tool under tools/: `--help` prints the tool's docstring
    and its own flags and exits 0 (absl's own `--help` exits 1); `--helpfull` is absl's."""
    argv = list(sys.argv if argv is None else argv)
    if any(a in HELP_ARGS for a in argv[1:]):
        doc = getattr(sys.modules.get("__main__"), "__doc__", None) or ""
        print(f"{doc.strip()}\n\nflags:\n{FLAGS.main_module_help()}")
        sys.exit(0)
    app.run(main, argv=argv)


def _agg_backend() -> None:
    """Binaries write PNGs with matplotlib's Agg backend (notebooks keep theirs). matplotlib
    loads only with the first figure (`lib.toolbox.plotting.pyplot`) and then reads
    MPLBACKEND; once loaded, it is told directly."""
    if "matplotlib" in sys.modules:
        sys.modules["matplotlib"].use("Agg")
    else:
        os.environ["MPLBACKEND"] = "Agg"


def run(train_and_evaluate: Callable | str, argv: Sequence[str] | None = None) -> None:
    """Parse flags and call `train_and_evaluate(config, workdir)`; exit 2 on a config error
    or a NaN/Inf or divergence stop (one line on stderr).

    `train_and_evaluate` may be "package.module:function", imported only after the flags
    are parsed (so `--help` and config errors come before JAX and the experiment load).
    `--help` prints `help_text` and exits 0; `--dry_run` prints the validated config.
    """
    _define_flags()
    argv = list(sys.argv if argv is None else argv)
    if any(a in HELP_ARGS for a in argv[1:]):
        print(help_text(argv[0], getattr(sys.modules.get("__main__"), "__doc__", None)))
        sys.exit(0)
    overrides = config_lib.override_keys(argv)
    rest = [a for a in argv if not a.startswith("--config.")]

    def main(_):
        guards.install_preemption_handler()
        try:
            workdir_lib.allow_restart(FLAGS.restart)
            config = resolve_config(FLAGS.config, overrides)
            if FLAGS.distributed:
                from lib.common import mesh as mesh_lib   # jax loads after --help and config errors
                mesh_lib.initialize_distributed(FLAGS.coordinator_address, FLAGS.num_processes,
                                                FLAGS.process_id, FLAGS.cpu_collectives)
            workdir = FLAGS.workdir or default_workdir(FLAGS.config)
            if FLAGS.dry_run:
                print(dry_run_text(FLAGS.config, config, workdir))
                return
            _agg_backend()
            _callable(train_and_evaluate)(config, workdir)
        except config_lib.ConfigError as err:   # one line on stderr (no log line beside it)
            kind = "workdir error" if isinstance(err, config_lib.WorkdirError) else "config error"
            print(f"{kind}: {' '.join(str(err).split())}", file=sys.stderr)
            sys.exit(2)
        except guards.Diverged as err:          # a NaN/Inf or divergence stop: one line too
            print(f"training stopped: {' '.join(str(err).split())}", file=sys.stderr)
            sys.exit(2)
        except guards.Preempted as err:
            logging.warning("preempted: %s", err)
            print(f"preempted: {err}", file=sys.stderr)
            sys.exit(0)

    app.run(main, argv=rest)
