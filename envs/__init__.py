"""deckgym environments. Importing this package registers the envs with PettingZoo's
registry, so ``pettingzoo.make("aec", "deckgym/craits-v0")`` (or ``"deckgym/pairs_draft-v0"``) finds them."""
import pettingzoo

ENV_IDS = {"craits_v0": "envs.craits.env:env", "pairs_draft_v0": "envs.pairs_draft.env:env"}

for _name, _entry in ENV_IDS.items():
    _id = "deckgym/" + _name.replace("_v", "-v")
    if _id not in pettingzoo.aec_registry:
        pettingzoo.register("aec", _id, entry_point=_entry)

from . import craits_v0, pairs_draft_v0  # noqa: E402

__all__ = ["craits_v0", "pairs_draft_v0"]
