"""EARTH experiment binary (main.py) and its training/evaluation (train.py)."""
