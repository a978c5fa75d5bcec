"""What the action-value algorithms (DMC, DoubleDQN) share: the Q-network, masked
epsilon-greedy moves and the network as a checkpoint's arrays."""

from __future__ import annotations

import numpy as np


def q_network(obs_size: int, net_arch, activation: str, n_actions: int):
    """The MLP obs -> net_arch (activation) -> one value per action."""
    import torch.nn as nn

    sizes, layers = [obs_size, *net_arch], []
    for inputs, outputs in zip(sizes, sizes[1:]):
        layers += [nn.Linear(inputs, outputs), {"tanh": nn.Tanh, "relu": nn.ReLU}[activation]()]
    return nn.Sequential(*layers, nn.Linear(sizes[-1], n_actions))


def epsilon_greedy(q, masks, epsilon: float, rng):
    """Per row: the masked argmax of ``q``, or with probability ``epsilon`` a uniformly random
    legal action (the argmax of random keys over the legal ones)."""
    greedy = np.where(masks, q, -np.inf).argmax(1)
    uniform = np.where(masks, rng.random(masks.shape), -1.0).argmax(1)
    return np.where(rng.random(len(q)) < epsilon, uniform, greedy)


def network_arrays(network) -> dict:
    """A ``q_network`` (or any MLP of Linear layers) as a checkpoint's policy.npz arrays."""
    import torch.nn as nn

    linears = [m for m in network if isinstance(m, nn.Linear)]
    arrays = {}
    for i, layer in enumerate(linears[:-1]):
        arrays[f"layer_{i}_weight"] = layer.weight.detach().cpu().numpy()
        arrays[f"layer_{i}_bias"] = layer.bias.detach().cpu().numpy()
    arrays["action_weight"] = linears[-1].weight.detach().cpu().numpy()
    arrays["action_bias"] = linears[-1].bias.detach().cpu().numpy()
    return arrays
