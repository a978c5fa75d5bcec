"""PPO for one Craits seat against deckgym's shipped bot, in one file (CleanRL style).

The learner takes one seat of a 4-player Craits table (a different seat each game); the
other three seats are played by an opponent agent from ``training.agents.make_agent``:
by default the shipped bot (``checkpoints/craits``, found by its name ``craits``). Only
torch and deckgym are needed. Read it top to bottom:

1. the env and the opponents,
2. ``next_decision``: the opponents move until the learner has to act (or the game ends),
3. the actor-critic with masked logits (an illegal action gets probability 0),
4. the PPO loop: collect ``--num-steps`` learner moves, GAE, clipped-objective updates,
5. an evaluation of the trained policy against three heuristic bots, beside random play.

    python examples/cleanrl_ppo.py                        # 200k learner moves
    python examples/cleanrl_ppo.py --total-steps 2048     # the smoke test CI runs (seconds)
    python examples/cleanrl_ppo.py --opponent heuristic --deals 3 3 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

from envs import craits_v0
from training.agents import make_agent
from training.common.games import EnvHandle


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--total-steps", type=int, default=200_000, help="learner moves to train on")
    p.add_argument("--num-steps", type=int, default=512, help="learner moves per rollout")
    p.add_argument("--deals", type=int, nargs="+", default=[3], help="hand sizes of the game's deals (short games)")
    p.add_argument(
        "--opponent",
        default="craits",
        help="the three other seats: craits (shipped bot), heuristic, random or a checkpoint folder",
    )
    p.add_argument("--lr", type=float, default=2.5e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--update-epochs", type=int, default=4)
    p.add_argument("--num-minibatches", type=int, default=4)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--eval-games", type=int, default=200, help="games of the final evaluation against the heuristic")
    p.add_argument("--seed", type=int, default=1)
    return p.parse_args()


# 1. The env and the opponents ------------------------------------------------------------

NUM_PLAYERS = 4


def make_env(deals):
    # illegal_action="raise": a bug that plays an illegal move fails loudly instead of ending the game
    return craits_v0.env(num_players=NUM_PLAYERS, deals=list(deals), illegal_action="raise")


def make_opponent(spec, deals, seed):
    # EnvHandle carries the env's id and arguments: make_agent checks a checkpoint against the rules.
    return make_agent(spec, EnvHandle("craits_v0", {"num_players": NUM_PLAYERS, "deals": list(deals)}), seed=seed)


# 2. Stepping the table until the learner decides ------------------------------------------


def next_decision(env, learner, opponent):
    """Let the other seats move until ``learner`` must act or the game is over. Returns
    (observation dict or None, reward the learner earned meanwhile, game over)."""
    reward = 0.0
    while True:
        if env.terminations[learner] or env.truncations[learner]:
            return None, reward, True
        agent = env.agent_selection
        obs = env.observe(agent)
        if agent == learner:
            return obs, reward, False
        env.step(int(opponent.act(obs["observation"], obs["action_mask"])))
        reward += env.rewards[learner]  # what this move paid the learner (a deal's end pays everyone)


def new_game(env, seed, opponent):
    """Reset with ``seed``; the learner sits in seat ``seed % 4``. Returns (learner, observation).
    A game that ends before the learner's first move (rare, in short deals) is dealt again."""
    learner = env.possible_agents[seed % NUM_PLAYERS]
    env.reset(seed=seed)
    while True:
        obs, _, done = next_decision(env, learner, opponent)
        if not done:
            return learner, obs
        env.reset()  # the next game of the env's own seeded sequence


# 3. The actor-critic --------------------------------------------------------------------


def layer_init(layer, std=2**0.5, bias=0.0):
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_size, num_actions, hidden):
        super().__init__()
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_size, hidden)),
            nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)),
            nn.Tanh(),
            layer_init(nn.Linear(hidden, 1), std=1.0),
        )
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_size, hidden)),
            nn.Tanh(),
            layer_init(nn.Linear(hidden, hidden)),
            nn.Tanh(),
            layer_init(nn.Linear(hidden, num_actions), std=0.01),
        )

    def get_value(self, x):
        return self.critic(x).squeeze(-1)

    def distribution(self, x, mask):
        # Masked logits: illegal actions get a very negative logit, so probability ~0
        # (a finite value, not -inf, keeps the entropy and its gradient free of NaN).
        logits = self.actor(x).masked_fill(~mask, -1e8)
        return Categorical(logits=logits)

    def get_action_and_value(self, x, mask, action=None):
        dist = self.distribution(x, mask)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.get_value(x)


def as_tensors(obs):
    x = torch.as_tensor(obs["observation"], dtype=torch.float32)
    mask = torch.as_tensor(obs["action_mask"], dtype=torch.bool)
    return x, mask


# 5. Evaluation against the heuristic bot -----------------------------------------------


def evaluate(choose, deals, games, seed):
    """``choose(observation dict) -> action`` in one seat (rotating), heuristic bots in the
    others. Returns (mean reward per game, its 95% CI half-width, win share)."""
    env, heuristic = make_env(deals), make_opponent("heuristic", deals, seed)
    rewards, wins = [], 0.0
    for game in range(games):
        learner, obs = new_game(env, seed + game, heuristic)
        total, done = 0.0, False
        while not done:
            env.step(choose(obs))
            total += env.rewards[learner]
            obs, reward, done = next_decision(env, learner, heuristic)
            total += reward
        rewards.append(total)
        winners = env.unwrapped.game.winners()
        if int(learner.split("_")[1]) in winners:
            wins += 1 / len(winners)  # a tie shares the win
    r = np.array(rewards)
    return r.mean(), 1.96 * r.std(ddof=1) / np.sqrt(len(r)), wins / games


# 4. PPO ---------------------------------------------------------------------------------


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: one thread is fastest
    rng = np.random.default_rng(args.seed)

    env = make_env(args.deals)
    opponent = make_opponent(args.opponent, args.deals, args.seed)
    space = env.observation_space(env.possible_agents[0])
    obs_size, num_actions = space["observation"].shape[0], space["action_mask"].shape[0]
    agent = Agent(obs_size, num_actions, args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    print(f"PPO: one Craits seat (deals {args.deals}) vs 3 x {args.opponent}, {args.total_steps} learner moves")

    # Rollout storage: one row per learner move.
    n = args.num_steps
    obs_buf = torch.zeros((n, obs_size))
    mask_buf = torch.zeros((n, num_actions), dtype=torch.bool)
    actions, logprobs = torch.zeros(n, dtype=torch.long), torch.zeros(n)
    rewards, dones, values = torch.zeros(n), torch.zeros(n), torch.zeros(n)

    game_seed = int(rng.integers(1 << 30))
    learner, obs = new_game(env, game_seed, opponent)
    returns_done, episode_return = [], 0.0
    updates = max(1, args.total_steps // n)
    start, global_step = time.time(), 0
    for update in range(1, updates + 1):
        optimizer.param_groups[0]["lr"] = args.lr * (1.0 - (update - 1.0) / updates)  # linear annealing

        # Collect n learner moves. A transition's reward is everything the learner earned
        # from its move up to its next decision (the opponents' moves and the deal's end).
        for step in range(n):
            x, mask = as_tensors(obs)
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(x, mask)
            obs_buf[step], mask_buf[step], actions[step] = x, mask, action
            logprobs[step], values[step] = logprob, value
            env.step(int(action))
            reward = env.rewards[learner]
            obs, later, done = next_decision(env, learner, opponent)
            rewards[step], dones[step] = reward + later, float(done)
            episode_return += reward + later
            global_step += 1
            if done:  # a new game, with the learner in another seat
                returns_done.append(episode_return)
                episode_return, game_seed = 0.0, game_seed + 1
                learner, obs = new_game(env, game_seed, opponent)

        # Generalised advantage estimation (dones[t]: the game ended after move t).
        with torch.no_grad():
            next_value = agent.get_value(as_tensors(obs)[0])
            advantages, last = torch.zeros(n), 0.0
            for t in reversed(range(n)):
                following = next_value if t == n - 1 else values[t + 1]
                nonterminal = 1.0 - dones[t]
                delta = rewards[t] + args.gamma * following * nonterminal - values[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                advantages[t] = last
            returns = advantages + values

        # Clipped-objective updates over shuffled minibatches.
        batch = np.arange(n)
        minibatch = n // args.num_minibatches
        for _epoch in range(args.update_epochs):
            rng.shuffle(batch)
            for i in range(0, n, minibatch):
                mb = torch.as_tensor(batch[i : i + minibatch])
                _, newlogprob, entropy, newvalue = agent.get_action_and_value(obs_buf[mb], mask_buf[mb], actions[mb])
                ratio = (newlogprob - logprobs[mb]).exp()
                adv = advantages[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_loss = 0.5 * ((newvalue - returns[mb]) ** 2).mean()
                loss = pg_loss - args.ent_coef * entropy.mean() + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        recent = returns_done[-100:]
        mean_return = np.mean(recent) if recent else float("nan")
        print(
            f"update {update}/{updates}  learner moves {global_step}  games {len(returns_done)}  "
            f"mean return (last 100 games) {mean_return:+.3f}  policy loss {pg_loss.item():+.4f}  "
            f"value loss {v_loss.item():.4f}  {global_step / (time.time() - start):.0f} moves/s",
            flush=True,
        )

    # 5. Evaluation: the greedy policy (masked argmax) vs three heuristic bots, beside random play.
    def greedy(obs):
        x, mask = as_tensors(obs)
        with torch.no_grad():
            return int(agent.distribution(x, mask).probs.argmax())

    def random_play(obs):
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))

    seed = 10_000_000  # games the learner never trained on, the same for both players
    print(f"evaluation vs heuristic ({args.eval_games} games, one seat vs 3 heuristic bots, even win share 0.25):")
    for name, choose in (("trained PPO", greedy), ("random play", random_play)):
        mean, ci, win_share = evaluate(choose, args.deals, args.eval_games, seed)
        print(f"  {name:12s} mean reward {mean:+.3f} +- {ci:.3f}  win share {win_share:.3f}")


if __name__ == "__main__":
    main()
