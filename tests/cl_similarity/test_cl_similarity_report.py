"""The cl_similarity targets and README block from a small results fixture (re-rendered
byte-identical from a stored results.json, whose targets are old bare bools or records)."""
from ml_collections import ConfigDict

from lib.cl_similarity.report import render, targets
from lib.common.report import met_tree, verdict, walk_targets

run = dict(steps=10, neg_var=0.05, neg_mean=-0.01, pos_mean=0.9, probe_test_acc=0.8, train_s=4.0)
RESULTS = {"machine": "x86_64, 2 CPU cores", "wall_s": 30.4,
           "targets": {"digits_variance_drops_every_batch": True,
                       "digits_probe_improves_batch_le_64": False},
           "ssl": {"digits": {"num_train": 160, "num_test": 100, "image_shape": [8, 8, 1],
                              "runs": [dict(run, batch_size=16, aux=False),
                                       dict(run, batch_size=16, aux=True, neg_var=0.025,
                                            probe_test_acc=0.75, train_s=5.0)]}}}
CONFIG = {"tag": "tiny", "parts": ["ssl"], "ssl": {"loss": "simclr", "temperature": 0.5,
          "aux_weight": 30.0, "batch_sizes": [16], "epochs": 1}}

EXPECTED = """\
### SimCLR ± VRNS on digits

digits: 160 training / 100 test images of 8×8; Var and means from the test set's two-view embeddings:

| batch | steps | Var[s_neg] | + VRNS | drop | E[s_neg] | + VRNS | E[s_pos] | + VRNS | probe acc. | + VRNS | Δ acc. | train s (both) |
|---|---|---|---|---|---|---|---|---|---|---|---|---|
| 16 | 10 | 0.0500 | 0.0250 | yes | -0.0100 | -0.0100 | 0.900 | 0.900 | 80.00% | 75.00% | -5.00 | 9 |

One seed per cell: the binomial standard error of one accuracy on 100 test images is about 4.2 points, so a Δ of that size is within noise.

Targets:

- `digits_variance_drops_every_batch`: **MET**
- `digits_probe_improves_batch_le_64`: **MISSED**

Config `tiny` (parts ['ssl'], simclr t = 0.5, λ = 30.0, batch sizes [16], 1 epochs); measured on x86_64, 2 CPU cores in 30 s (this invocation; finished SSL runs are read back on a rerun, their own train times are in the tables)."""


def test_render_of_a_fixture_is_the_expected_markdown():
    """Δ acc. is signed, the binomial SE uses the mean accuracy (0.775 on 100 images: 4.2
    points), MET/MISSED per target, the config line closes the block."""
    assert render(RESULTS, CONFIG) == EXPECTED


def test_targets_from_the_ssl_part_alone():
    """VRNS halves Var[s_neg] (met) but lowers the probe accuracy at B = 16 (missed); no
    theory keys without the theory part (the config is then not read)."""
    ssl_only = {"ssl": RESULTS["ssl"]}
    assert met_tree(targets(ssl_only, None)) == RESULTS["targets"]    # records' verdicts


THEORY = {"max_err_full_batch": 1e-5, "max_err_siglip_sweep": 2e-3, "thm52_max_violation": -0.1,
          "minibatch": {"batch_sizes": [4, 8], "in_bounds": [True, True], "var": [0.02, 0.01],
                        "var_vrns": [0.01, 0.012]}}


def test_targets_are_records_with_the_numbers_behind_them():
    """Theory part: SigLIP error above the tolerance (missed), Thm 5.2 and 5.5 bounds hold
    (met), VRNS lowers Var at m = 4 only (missed); SSL part as in the fixture."""
    t = targets({"theory": THEORY, "ssl": RESULTS["ssl"]},
                ConfigDict({"theory": {"tolerance": 1e-3}}))
    assert [(p, verdict(r)) for p, r in walk_targets(t)] == [
        ("free_embeddings_match_closed_form", "MISSED"),
        ("thm52_holds_on_trajectories", "MET"),
        ("minibatch_variance_in_thm55_bounds", "MET"),
        ("minibatch_vrns_lowers_variance", "MISSED"),
        ("digits_variance_drops_every_batch", "MET"),
        ("digits_probe_improves_batch_le_64", "MISSED")]
    assert t["digits_probe_improves_batch_le_64"] == {
        "batch_sizes": [16], "probe_acc": [0.8], "probe_acc_vrns": [0.75], "met": False}
    assert t["free_embeddings_match_closed_form"]["max_err_siglip_sweep"] == 2e-3


def test_render_is_the_same_from_records_and_from_old_bare_bools():
    new = dict(RESULTS, targets=targets({"ssl": RESULTS["ssl"]}, None))
    assert render(new, CONFIG) == render(RESULTS, CONFIG) == EXPECTED
