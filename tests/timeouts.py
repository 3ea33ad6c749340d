"""Timeouts for subprocesses started by tests: they catch hangs, never slowness.

On a loaded machine (load average 10-17, the whole suite taking over an hour) a tool that
needs 90 s alone can need 5-10 minutes, so every subprocess a test waits for gets
`HANG_TIMEOUT_S`, not a guess at its running time. Import it as
`from tests.timeouts import HANG_TIMEOUT_S`.
"""
HANG_TIMEOUT_S = 900
