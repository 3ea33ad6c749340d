"""The cl_similarity targets and README block from a small results fixture (re-rendered
byte-identical from a stored results.json)."""
from lib.cl_similarity.report import render, targets

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
    assert targets(ssl_only, None) == RESULTS["targets"]
