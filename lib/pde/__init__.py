"""Classical PDE solvers on periodic domains, written as pure JAX functions."""
