"""3D-FLEG experiment (see README.md)."""
