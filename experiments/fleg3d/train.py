"""3D-FLEG end to end: data bank, prompt embeddings, base training, incremental sessions.

`train_and_evaluate(config, workdir)` is the whole experiment; `main.py` parses flags.

    config -> validate -> real data files indexed and checked (data.source != procedural)
      -> bank (procedural clouds, or clouds read from ModelNet40 / ScanObjectNN files,
         for the configured protocols + descriptors)
      -> MiniLM prompt embeddings (once; workdir/text_embeddings.npz)
      -> for each network in config.variants: train_loop.train on the base session in
         workdir/models/<variant>/ (checkpoints, resume, metrics.jsonl)
      -> embed every bank row with each frozen network
      -> for each protocol, method and repeat: protocol.run (sessions one at a time)
      -> workdir: results.json, results.md, plots/<protocol>_accuracy.png, _harmonic.png

Rerunning the same command resumes training from the checkpoints (finished networks are
just restored) and recomputes the evaluation (seconds to minutes).
"""
from __future__ import annotations

import os
import time

import jax
from absl import logging

from lib.common import extras
from lib.common import config as config_lib, mesh as mesh_lib, train_loop
from lib.common import guards, report as common_report, workdir as wd
from lib.common.stages import Stages
from lib.fleg3d import bank as bank_lib, config_schema, methods, protocol, report, text
from lib.fleg3d.config_schema import optional_modules
from lib.fleg3d.training import make_model, make_task
from lib.toolbox import plotting

validate = config_schema.validate

def method_table(config, bank, emb, text_all, params_filp) -> dict:
    """{method name: protocol.Method}: 3D-FLEG, its ablations, the four baselines."""
    g = config.model.proto_weight
    out = {}
    for name, variant in (("3D-FLEG", "fleg3d"), ("w/o extraction", "no_extraction"),
                          ("w/o embedding", "no_embedding"), ("w/o alignment loss", "no_align"),
                          ("FILP-3D-like", "filp3d")):
        if variant in emb:
            out[name] = methods.PromptPrototype(emb[variant], text_all, "prompt+proto", g,
                                                calibrate=config.model.calibrate)
    out["NCM prototypes"] = methods.PromptPrototype(emb["filp3d"], text_all, "proto")
    out["text zero-shot"] = methods.PromptPrototype(emb["filp3d"], text_all, "text")
    out["fine-tuning"] = methods.FineTune(
        make_model(config, "filp3d"), params_filp, bank.points, bank.desc, text_all,
        steps=config.eval.finetune_steps, lr=config.eval.finetune_lr,
        temperature=config.model.temperature)
    return out


def train_and_evaluate(config, workdir: str) -> dict:
    validate(config)
    srcs = bank_lib.check_sources(config)        # missing files / wrong layout: before compute
    extras.require(optional_modules(config))   # before any compute
    t0 = time.time()
    mesh = mesh_lib.make_mesh(config.mesh.data, config.mesh.model)
    primary = mesh_lib.is_primary()
    wd.prepare(workdir, config_lib.to_json_dict(config), primary=primary,
               renamed=config_schema.RENAMED_KEYS)
    bank = bank_lib.build(config, srcs)
    logging.info("bank: %d clouds of %d points, descriptor dim %d", len(bank.points),
                 bank.points.shape[1], bank.desc.shape[1])
    text_all = text.prompt_embeddings(config.data.classes, config.text.template,
                                      os.path.join(workdir, "text_embeddings.npz"),
                                      procedural=config.data.source == "procedural")
    base_text = text_all[:config.data.base_classes]
    emb, params, train_info = {}, {}, {}
    for variant in config.variants:
        guards.check_preempted(f"variant {variant}")
        task = make_task(config, variant, bank, base_text)
        t1 = time.time()
        res = train_loop.train(task, train_loop.LoopConfig.from_config(config.train),
                               workdir=Stages(workdir, "models").dir(variant), mesh=mesh)
        params[variant] = jax.device_get(res.state["params"])
        emb[variant] = methods.embed_bank(make_model(config, variant), params[variant],
                                          bank.points, bank.desc)
        train_info[variant] = {"steps": res.step, "resumed_from": res.resumed_from,
                               "wall_s": time.time() - t1}
    table = method_table(config, bank, emb, text_all, params["filp3d"])
    plan = next(iter(bank.protocols.values())).session_classes
    results = {"protocols": {}, "train": train_info, "num_clouds": int(len(bank.labels)),
               "descriptor_dim": int(bank.desc.shape[1]), "classes": list(config.data.classes),
               "session_classes": [list(s) for s in plan],
               "data": {"source": config.data.source, "clouds_per_class": bank.counts}}
    for pname in config.eval.protocols:
        prot = bank.protocols[pname]
        results["protocols"][pname] = {
            name: protocol.summarise([protocol.run(prot, m, shots=config.data.shots,
                                                   seed=config.seed, repeat=r)
                                      for r in range(config.eval.repeats)])
            for name, m in table.items()}
    results["targets"] = report.targets(results)
    results["machine"] = common_report.machine()
    results["wall_s"] = time.time() - t0
    guards.check_preempted("writing results.json")
    if primary:
        if config.eval.plots:
            for pname, by_method in results["protocols"].items():
                _plots(os.path.join(workdir, wd.PLOTS), pname, by_method)
        wd.write_json_atomic(os.path.join(workdir, wd.RESULTS), results)
        wd.write_text_atomic(os.path.join(workdir, "results.md"), report.tables(results) + "\n")
    return results


def _plots(plot_dir: str, pname: str, by_method: dict) -> None:
    for key, label in (("acc", "accuracy (all seen classes)"), ("harmonic", "harmonic accuracy")):
        series = {}
        for name, s in by_method.items():
            xs = [i for i, v in enumerate(s[key]) if v is not None]
            series[name] = (xs, [s[key][i] for i in xs])
        plotting.line_plot(os.path.join(plot_dir, f"{pname}_{key}.png"), series,
                           xlabel="session", ylabel=label, title=f"3D-FLEG, {pname}")
