"""``python -m training.league``: the command of ``training.matches.league``, kept at this path."""

if __name__ == "__main__":
    from training.matches.league import main

    main()
