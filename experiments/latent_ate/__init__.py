"""ATE estimation with latent features of pre-trained networks (experiment binary)."""
