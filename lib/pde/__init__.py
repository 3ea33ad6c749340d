"""Classical PDE solvers on periodic domains, written as pure JAX functions.

Solvers (each `make_step(...) -> step(state) -> state`, plus `random_initial_state`):
  navier_stokes   2-D Kolmogorov flow, vorticity form, pseudo-spectral, ETDRK4
  burgers         2-D viscous Burgers, 4th-order finite differences, RK4 (`integrators`)
  burgers_spectral  the same equation, pseudo-spectral (2/3 rule), ETDRK4 (the front's
                  strongest classical Burgers solver; not a dataset generator)
  gray_scott      2-D Gray–Scott reaction–diffusion, Fourier spectral, ETDRK4
  kdv             1-D Korteweg–de Vries, Fourier spectral, ETDRK4
Building blocks: spectral (wavenumbers, 2/3 masks), etdrk4, finite_differences,
integrators (classical RK4 as a diffrax tableau), checks (input checks, CFL).
Data: trajectory (`simulate`, batched/sharded runs, blow-up reports), downsampling,
systems (the four systems by name), dataset (write/cache/load), data_config (config schema).
"""
