"""Versioned module, PettingZoo style: ``from envs import craits_v0``."""

from .craits.env import env, raw_env

__all__ = ["env", "raw_env"]
