"""The agent contract: anything that takes a seat — random play, a game's heuristic, a
trained policy, an exported bot, a person, a program behind the bot protocol — is an
``Agent`` or a ``SearchAgent``. Tools seat them through one factory
(``training.agents.make_agent``) and ask them through ``training.agents.checked_act``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """Decides from its seat's observation only: the env's vector and the legal-action mask."""

    name: str  # the spec it was made from: what reports and errors call it

    def reset(self) -> None:
        """Forget the last game (a new one starts)."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A legal action for this observation."""
        ...


class SearchAgent(ABC):
    """Decides from its seat's view of the engine (``envs.spec.SearchGame.view``), which it
    builds itself: a search bot. It sees what the seat may know and nothing more."""

    name: str

    def reset(self) -> None:  # noqa: B027  (a search bot may keep nothing between games)
        """Forget the last game."""

    @abstractmethod
    def act_on(self, game: Any, seat: int) -> int:
        """A legal action for ``seat`` of the engine ``game``."""

    def root_stats(self) -> dict[int, tuple[int, float]]:
        """The last decision's statistics per action (visits, mean value), for frontends
        that show why a move was chosen; empty when there are none."""
        return {}


Seat = Agent | SearchAgent
