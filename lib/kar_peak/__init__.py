"""KAR and PEAK: kernel alignment for implicit neural representations (Li et al., ICML 2025).

Modules: `encodings` (positional, random Fourier, PEAK learnable encoding), `inrs` (ReLU+PE,
RFF, SIREN, FINER, PEAK behind one `INR` module), `ntk` (empirical NTK through jvp/vjp,
analytic ReLU NTKs), `kar` (the Kernel Alignment Regulariser and its alternatives), `tasks`
(images, masks, 1-D regression with a closed-form optimal kernel), `metrics` (PSNR, SSIM on
missing pixels, kernel alignment), `fit` (vmapped fits as a `lib.common.train_loop.Task`),
`report` (tables), `config_schema`.
"""
