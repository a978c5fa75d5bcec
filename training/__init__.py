"""deckgym's tooling around the envs: training, bots and their files, matches and leagues,
the frontends (bot protocol, web app, terminal), benchmarks. ``docs/architecture.md`` maps it."""
