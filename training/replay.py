"""``python -m training.replay``: the command of ``training.matches.replay``, kept at this path."""

if __name__ == "__main__":
    from training.matches.replay import main

    main()
