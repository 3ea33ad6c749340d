"""CADES: conformal anomaly detection in continuous-time event sequences (Zhang et al., ICML 2025)."""
