"""Dynamic token aggregation for detection-transformer encoders ("Not All Tokens Matter All
The Time", Cheng et al., ICML 2025) on a small multi-scale DETR; see
experiments/dynamic_detr/README.md."""
