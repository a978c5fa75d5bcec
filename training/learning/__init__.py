"""Training bots from config files: the config schema (``config``, ``preflight``), the
learner's env and opponent pool (``learner_env``; RLlib's: ``rllib_env``), the run with its
checkpoints and evaluations (``train``, ``callback``), and benchmarks of the algorithms
(``benchmark``). The algorithms themselves are ``training.algorithms``."""
