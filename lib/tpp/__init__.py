"""Temporal point processes in pure JAX: Poisson, multivariate Hawkes, a neural TPP.

Every model works on padded batches (`lib.tpp.events.Events`) and provides its
compensator Λ*_k(t), so that sequences can be time-rescaled (`lib.tpp.rescale`).
"""
