"""GMFlow: Gaussian mixture flow matching (Chen et al., ICML 2025), in JAX.

    mixture      GM container (means, log-weights, shared log-std), NLL, moments, sampling, masks
    denoising    u ↔ x₀ GMs, the GM-SDE transition (Eq. 9), the GM-ODE conversion (Eq. 10),
                 the exact denoiser of a GM data set
    losses       transition loss (λ), KL/NLL loss (Eq. 6), L2 flow matching
    samplers     GM-SDE/ODE (+ second order), Euler/Heun/DDPM baselines
    guidance     probabilistic guidance and CFG
    networks     MLP denoiser with a GM head; a small classifier for the image metrics
    training     the train_loop Task; toys, metrics, plots, report, config_schema
"""
