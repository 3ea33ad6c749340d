"""MaxEntDP: maximum-entropy RL with a diffusion policy (Dong, Cheng & Zhang, ICML 2025),
and the Gaussian Soft Actor-Critic it is compared with, on environments written in JAX.

Modules:
  envs             one small environment interface; multi-goal 2-D point env, gymnax
                   Pendulum and brax locomotion adapters
  replay           replay buffer as a pure pytree
  networks         MLP and learnable Fourier time features
  diffusion_policy VP cosine schedule, noise-prediction net, DDPM sampling, action bounds
  q_weighted       Q-weighted noise estimation (QNE) target and loss
  logprob          log π(a|s) by the integral over noise levels
  critics          twin Q networks, soft TD target, soft-max (SQL) value, Polyak update
  sac              tanh-Gaussian actor, SAC losses, temperature loss
  agent            both agents behind one interface: init, act, act_eval, update
  rollout          on-device collection (lax.scan) and evaluation, vmapped over seeds
  diagnostics      multi-goal mode diagnostics: Q at the start state per goal sector,
                   exp(Q/α) vs policy sector masses, QNE against a fixed 4-mode Q
  config_schema    config keys, ranges and cross-checks
"""
