"""The one experiment harness: configs, meshes, checkpoints, metrics, progress, reports.

Every experiment in the workspace is composed from these modules; none writes its own
train loop, checkpointing or logging. Import the submodules directly, e.g.
`from lib.common import config, train_loop`.
"""
