"""Tianshou: masked (double) DQN in one Craits seat against deckgym's heuristic bots.

Tianshou's ``PettingZooEnv`` wraps ``craits_v0.env(...)`` unmodified: it turns each
observation into ``{"agent_id", "obs", "mask"}``, the form Tianshou's DQN reads masks from
(``batch.obs.mask``: an illegal action's Q-value is pushed below every legal one, both when
acting and in the double-DQN target). ``VersusBots`` below makes that 4-seat game a
single-agent gymnasium env: the learner sits in one seat (a different one each game) and
deckgym's heuristic bot (``training.agents.make_agent``) plays the other three inside
``step()``, so a transition runs from one learner decision to its next and its reward is
everything the learner earned in between (the deal's end included, whoever ended it).

Tianshou's own multi-agent route (``MultiAgentOffPolicyAlgorithm``, one algorithm per seat)
stores every seat's move as a transition whose next observation is the *next seat's*, and
gives a seat only the rewards of its own moves: a Craits deal usually ends on another
seat's move, so the learner would rarely see its score. The env wrapper avoids that.

    pip install -e '.[train,examples]'                   # tianshou 2.x (Python 3.11+)
    python examples/tianshou_dqn.py                      # 10 epochs of 10k learner moves
    python examples/tianshou_dqn.py --epochs 1 --epoch-steps 1000   # the smoke test CI runs
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np
import torch
from tianshou.algorithm import DQN
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv, PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

from envs import craits_v0
from training.agents import make_agent
from training.common.games import EnvHandle

NUM_PLAYERS = 4


class VersusBots(gym.Env):
    """One seat of a Tianshou ``PettingZooEnv`` over Craits; ``opponent`` plays the others."""

    def __init__(self, deals, opponent="heuristic", first_seat=0):
        args = {"num_players": NUM_PLAYERS, "deals": list(deals)}
        self.game = PettingZooEnv(craits_v0.env(**args, illegal_action="raise"))
        self.bot = make_agent(opponent, EnvHandle("craits_v0", args))
        space = self.game.observation_space  # the PettingZoo Dict: observation, action_mask
        size = space["observation"].shape[0]
        self.observation_space = gym.spaces.Dict(
            {"obs": space["observation"], "mask": gym.spaces.MultiBinary(int(self.game.action_space.n))}
        )
        self.action_space = self.game.action_space
        self.games, self.first_seat, self.size = 0, first_seat, size

    def reset(self, *, seed=None, options=None):
        self.learner = self.game.agents[(self.first_seat + self.games) % NUM_PLAYERS]  # a new seat each game
        self.games += 1
        terminated = truncated = True
        while terminated or truncated:  # a game that ends before the learner's first move is dealt again
            obs, _ = self.game.reset(seed=seed)
            obs, _, terminated, truncated = self._bots_move(obs)
            seed = None
        return obs, {}

    def step(self, action):
        obs, rewards, terminated, truncated, _ = self.game.step(int(action))
        obs, later, terminated, truncated = self._bots_move(obs, terminated, truncated)
        return obs, rewards[self.game.agent_idx[self.learner]] + later, terminated, truncated, {}

    def _bots_move(self, obs, terminated=False, truncated=False):
        """The bots move until the learner's turn or the game's end. Returns the learner's
        observation ({"obs", "mask"}), its reward meanwhile, terminated, truncated."""
        reward = 0.0
        while obs["agent_id"] != self.learner and not (terminated or truncated):
            mask = np.asarray(obs["mask"], dtype=np.int8)
            obs, rewards, terminated, truncated, _ = self.game.step(int(self.bot.act(obs["obs"], mask)))
            reward += rewards[self.game.agent_idx[self.learner]]
        return {"obs": obs["obs"], "mask": np.asarray(obs["mask"], dtype=bool)}, reward, terminated, truncated


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--epoch-steps", type=int, default=10_000, help="learner moves per epoch")
    p.add_argument("--deals", type=int, nargs="+", default=[3], help="hand sizes of the game's deals (short games)")
    p.add_argument("--opponent", default="heuristic", help="the other three seats: heuristic, random, craits, ...")
    p.add_argument("--envs", type=int, default=4, help="games played side by side")
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--buffer", type=int, default=50_000)
    p.add_argument("--eval-games", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    np.random.seed(args.seed)  # Tianshou's epsilon-greedy draws from numpy's global generator

    train_envs = DummyVectorEnv([lambda i=i: VersusBots(args.deals, args.opponent, i) for i in range(args.envs)])
    train_envs.seed(args.seed)
    space = train_envs.observation_space[0]

    net = Net(state_shape=space["obs"].shape, action_shape=int(space["mask"].n), hidden_sizes=[256, 256])
    policy = DiscreteQLearningPolicy(model=net, action_space=train_envs.action_space[0], eps_training=0.5)
    algorithm = DQN(
        policy=policy,
        optim=AdamOptimizerFactory(lr=args.lr),
        gamma=0.99,
        n_step_return_horizon=3,
        target_update_freq=200,
        is_double=True,
    )
    buffer = VectorReplayBuffer(args.buffer, buffer_num=args.envs)
    train_collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)

    def evaluate(label):
        """The greedy policy in games it never trained on, the same games each time: one
        seat vs 3 heuristic bots, each deal played from all 4 seats."""
        envs = DummyVectorEnv([lambda i=i: VersusBots(args.deals, "heuristic", i) for i in range(NUM_PLAYERS)])
        envs.seed([10_000_000] * NUM_PLAYERS)  # the same deals in the 4 envs, the learner in another seat in each
        policy.eval()
        r = (
            Collector[CollectStats](algorithm, envs)
            .collect(n_episode=args.eval_games, reset_before_collect=True)
            .returns
        )
        print(
            f"  {label:10s} mean reward {r.mean():+.3f} +- {1.96 * r.std(ddof=1) / np.sqrt(len(r)):.3f} over {len(r)} games"
        )

    print(f"DQN: one Craits seat (deals {args.deals}) vs 3 x {args.opponent}, {args.epochs} x {args.epoch_steps} moves")
    print("evaluation vs heuristic (greedy, one seat vs 3 heuristic bots):")
    evaluate("untrained")

    def anneal(epoch, env_step):  # exploration 0.5 -> 0.05 over the first half of training
        progress = min(1.0, env_step / max(1, args.epochs * args.epoch_steps / 2))
        policy.set_eps_training(0.5 + (0.05 - 0.5) * progress)

    train_collector.reset()
    train_collector.collect(n_step=1000)  # warm-up moves in the buffer (half of them random legal ones)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            max_epochs=args.epochs,
            epoch_num_steps=args.epoch_steps,
            collection_step_num_env_steps=16,
            update_step_num_gradient_steps_per_sample=0.25,
            batch_size=64,
            training_fn=anneal,
            show_progress=False,
        )
    )
    print(f"trained {result.train_step} learner moves ({result.train_episode} games), {result.update_step} updates")
    print("evaluation vs heuristic (greedy, one seat vs 3 heuristic bots):")
    evaluate("trained")


if __name__ == "__main__":
    main()
