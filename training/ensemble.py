"""``python -m training.ensemble``: the command of ``training.agents.ensemble``, kept at this path."""

if __name__ == "__main__":
    from training.agents.ensemble import main

    main()
