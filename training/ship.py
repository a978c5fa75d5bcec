"""``python -m training.ship``: the command of ``training.agents.ship``, kept at this path."""

if __name__ == "__main__":
    from training.agents.ship import main

    main()
