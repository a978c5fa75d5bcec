"""``python -m training.export``: the command of ``training.agents.export``, kept at this path."""

if __name__ == "__main__":
    from training.agents.export import main

    main()
