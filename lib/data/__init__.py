"""Datasets shared by several papers (images that ship in packages or Debian data packages)."""
