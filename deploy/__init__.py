"""Deployment files, and a cluster on one machine without Docker (localcluster.py)."""
