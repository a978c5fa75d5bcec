"""Versioned module, PettingZoo style: ``from envs import pairs_draft_v0``."""

from .pairs_draft.env import env, raw_env

__all__ = ["env", "raw_env"]
