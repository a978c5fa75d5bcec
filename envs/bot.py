"""What the games' rule-based bots share: the agent interface and the forced-move shortcut."""

from __future__ import annotations

import numpy as np


class HeuristicBot:
    """``act(observation, action_mask) -> action`` from the seat's own observation only.
    Stateless, so one instance serves every seat. Subclasses implement ``choose``."""

    name = "heuristic"

    def reset(self) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if len(legal) == 1:  # a forced move needs no thought
            return int(legal[0])
        return self.choose(observation, legal)

    def choose(self, observation: np.ndarray, legal: np.ndarray) -> int:  # pragma: no cover - interface
        raise NotImplementedError
