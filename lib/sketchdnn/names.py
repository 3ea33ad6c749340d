"""The runs' names as the tables print them, shared by report.py and seeds.py.

    GS          the Gaussian-Softmax model (the paper's)
    BASELINES   the label processes it is compared with
    PE          Gaussian-Softmax with a positional encoding (the ablation)
    X0_LABELS   the reverse step's x̂₀ logit parameterisations (diffusion.x0_logits)
"""
GS, BASELINES, PE = "gaussian_softmax", ("onehot_gaussian", "d3pm"), "gaussian_softmax_pe"
LABELS = {"gaussian_softmax": "Gaussian-Softmax (SketchDNN)",
          "onehot_gaussian": "one-hot Gaussian labels", "d3pm": "D3PM labels",
          "gaussian_softmax_pe": "Gaussian-Softmax + positional enc."}
X0_LABELS = {"two_log_p": "2·log p̂", "embedding_mean": "Σ p̂·u"}
