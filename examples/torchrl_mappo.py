"""TorchRL: MAPPO on partnership Craits, a shared masked policy and a centralised critic on ``state()``.

``PettingZooWrapper`` wraps ``craits_v0.env(partnership=True)`` unmodified, with the four
seats as one group ``agents`` (so one policy, shared by every seat: self-play), the
``action_mask`` of each observation as the group's mask, ``use_mask=True`` (``("agents",
"mask")``: which seat acts at each step of the turn-based game) and ``return_state=True``
(the env's ``state()``: every seat's observation concatenated, 824 floats). The
``ActionMask`` transform keeps the action spec's mask in step with the env, so random
actions (``check_env_specs``, ``rand_step``) are legal too.

- Policy: an MLP on the seat's own observation -> logits -> ``MaskedCategorical`` over
  the legal moves.
- Critic: an MLP on ``state`` -> one value per seat. The state is defined at every step,
  so each seat's return is estimated over the whole game (GAE per seat on its own rewards,
  the deal's end paying both partners their side's reward), while only the acting seat's
  moves enter the policy loss (``ClipPPOLoss(reduction="none")`` masked by ``("agents",
  "mask")``).
- At the end the trained partnership (seats 0 and 2, greedy) plays the heuristic
  partnership, then swaps sides.

    pip install -e '.[train,examples]'                    # torchrl, tensordict
    python examples/torchrl_mappo.py                      # 200k env steps (all seats)
    python examples/torchrl_mappo.py --total-frames 2048  # the smoke test CI runs
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import ActionMask, TransformedEnv
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import check_env_specs
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

from envs import craits_v0
from training.agents import make_agent
from training.common.games import EnvHandle

SEATS = [f"player_{i}" for i in range(4)]
OBS, MASK, ACTION = ("agents", "observation", "observation"), ("agents", "action_mask"), ("agents", "action")


def make_env(deals):
    game = craits_v0.env(num_players=4, partnership=True, deals=list(deals), illegal_action="raise")
    env = PettingZooWrapper(
        env=game,
        group_map={"agents": SEATS},  # one group: a shared policy for every seat
        use_mask=True,  # ("agents", "mask"): the seat that acts
        return_state=True,  # "state": every seat's observation, for the critic
        categorical_actions=True,
        done_on_any=False,
    )
    return TransformedEnv(env, ActionMask(action_key=ACTION, mask_key=MASK))


class Critic(nn.Module):
    """state -> one value per seat, written as ("agents", "state_value") [..., 4, 1]."""

    def __init__(self, state_size, seats, hidden):
        super().__init__()
        self.net = MLP(in_features=state_size, out_features=seats, num_cells=[hidden, hidden], activation_class=nn.Tanh)

    def forward(self, state):
        return self.net(state).unsqueeze(-1)


def evaluate(actor_net, deals, games, seed):
    """The greedy policy as one partnership against two heuristic bots, both sides in turn.
    Returns the policy's side's mean reward per game and its win share."""
    env = craits_v0.env(num_players=4, partnership=True, deals=list(deals), illegal_action="raise")
    heuristic = make_agent("heuristic", EnvHandle("craits_v0", {"num_players": 4, "partnership": True, "deals": deals}))
    rewards, wins = [], 0.0
    for game in range(games):
        ours = (0, 2) if game % 2 == 0 else (1, 3)
        env.reset(seed=seed + game // 2)  # each deal played from both sides
        total = 0.0
        while not any(env.terminations.values()) and not any(env.truncations.values()):
            seat = env.possible_agents.index(env.agent_selection)
            obs = env.observe(env.agent_selection)
            if seat in ours:
                with torch.no_grad():
                    logits = actor_net(torch.as_tensor(obs["observation"]))
                action = int(logits.masked_fill(~torch.as_tensor(obs["action_mask"], dtype=torch.bool), -1e9).argmax())
            else:
                action = int(heuristic.act(obs["observation"], obs["action_mask"]))
            env.step(action)
            total += env.rewards[env.possible_agents[ours[0]]]
        rewards.append(total)
        winners = env.unwrapped.game.winners()
        wins += ours[0] in winners and (1.0 if len(winners) == 2 else 0.5)  # a tie shares the win
    return float(np.mean(rewards)), wins / games


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--total-frames", type=int, default=200_000, help="env steps (moves of all four seats)")
    p.add_argument("--frames-per-batch", type=int, default=1024)
    p.add_argument("--deals", type=int, nargs="+", default=[3], help="hand sizes of the game's deals (short games)")
    p.add_argument("--epochs", type=int, default=4, help="passes over each batch")
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995, help="per env step (a seat moves about every 4th)")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--eval-games", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)

    env = make_env(args.deals)
    env.set_seed(args.seed)
    check_env_specs(env)  # reset/step/rollout agree with the specs (random legal moves via ActionMask)
    obs_size = env.observation_spec[OBS].shape[-1]
    state_size = env.observation_spec["state"].shape[-1]
    num_actions = env.full_action_spec[ACTION].space.n
    print(
        f"MAPPO: partnership Craits (deals {args.deals}), 4 seats sharing one policy; obs {obs_size}, state {state_size}"
    )

    actor_net = MLP(
        in_features=obs_size, out_features=num_actions, num_cells=[args.hidden, args.hidden], activation_class=nn.Tanh
    )
    actor = ProbabilisticActor(
        TensorDictModule(actor_net, in_keys=[OBS], out_keys=[("agents", "logits")]),
        in_keys={"logits": ("agents", "logits"), "mask": MASK},
        out_keys=[ACTION],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
        log_prob_key=("agents", "action_log_prob"),
    )
    critic = TensorDictModule(
        Critic(state_size, len(SEATS), args.hidden), in_keys=["state"], out_keys=[("agents", "state_value")]
    )

    collector = Collector(
        env,
        actor,
        frames_per_batch=args.frames_per_batch,
        total_frames=args.total_frames,
        auto_register_policy_transforms=False,  # the policy keeps no recurrent state
    )
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, normalize_advantage=False, reduction="none")
    loss.set_keys(
        action=ACTION,
        sample_log_prob=("agents", "action_log_prob"),
        value=("agents", "state_value"),
        advantage=("agents", "advantage"),
        value_target=("agents", "value_target"),
        reward=("agents", "reward"),
        done=("agents", "done"),
        terminated=("agents", "terminated"),
    )
    gae = GAE(gamma=args.gamma, lmbda=0.95, value_network=critic, average_gae=False)
    gae.set_keys(
        reward=("agents", "reward"),
        done=("agents", "done"),
        terminated=("agents", "terminated"),
        value=("agents", "state_value"),
        advantage=("agents", "advantage"),
        value_target=("agents", "value_target"),
    )
    optimizer = torch.optim.Adam(loss.parameters(), lr=args.lr)

    frames = 0
    for i, batch in enumerate(collector):
        frames += batch.numel()
        with torch.no_grad():
            gae(batch)  # advantages and value targets for every seat at every step (the critic sees the state)
        acting = batch["agents", "mask"]  # [T, 4]: the seat that moved at each step
        adv = batch["agents", "advantage"]
        moved = adv[acting]
        batch["agents", "advantage"] = (adv - moved.mean()) / (moved.std() + 1e-8)
        for _ in range(args.epochs):
            for idx in torch.randperm(batch.numel()).split(args.minibatch):
                mb = batch[idx]
                out = loss(mb)
                m = mb["agents", "mask"].float()  # only the acting seat's move is a decision
                policy_loss = (out["loss_objective"] * m).sum() / m.sum()
                entropy_loss = (out["loss_entropy"] * m).sum() / m.sum()
                total = policy_loss + entropy_loss + out["loss_critic"].mean()
                optimizer.zero_grad()
                total.backward()
                nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimizer.step()
        collector.update_policy_weights_()
        done = batch["next", "done"].squeeze(-1)
        games = int(done.sum())
        side_return = batch["next", "agents", "reward"][:, 0, 0].sum().item() / max(games, 1)
        print(
            f"batch {i + 1}  env steps {frames}  games {games}  policy loss {policy_loss.item():+.4f}  "
            f"critic loss {out['loss_critic'].mean().item():.4f}  seats 0+2 return/game {side_return:+.3f}",
            flush=True,
        )
    collector.shutdown()

    mean, win_share = evaluate(actor_net, args.deals, args.eval_games, seed=10_000_000)
    print(
        f"evaluation vs heuristic ({args.eval_games} games, the policy as one partnership, greedy, even win share 0.5):"
    )
    print(f"  trained MAPPO mean reward {mean:+.3f}  win share {win_share:.3f}")


if __name__ == "__main__":
    main()
