"""JETTS domains that run offline: arithmetic (exact step labels), HumanEval (sandbox-graded
code), instruction following (programmatic checkers)."""
